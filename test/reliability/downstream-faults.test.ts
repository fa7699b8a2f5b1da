import { createHash } from 'node:crypto';
import type { Socket } from 'node:net';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { sampleTransferSucceeded } from '../../src/samples/transfer-succeeded.js';
import { signHmacSha256Hex } from '../../src/signing/hmac-sha256-hex.js';
import type { DeliveryDetail } from '../../src/store/outbox-store.js';
import { postSigned } from '../helpers/http.js';
import { startTestReceiver, TEST_SECRET, type TestReceiver } from '../helpers/receiver.js';
import { eventually, rulesDirWith, TEST_DELIVERY } from '../helpers/rules.js';
import { startCountingSink, type CountingSink } from './support/counting-sink.js';
import { hugeBody, respond, stallMidBody, startFaultServer, trickle, type FaultRequest, type FaultServer } from './support/fault-server.js';
import { loopbackSuite } from './support/loopback-suite.js';
import { report, scale, sleep, timeLimit } from './support/soak.js';

// Every destination is a loopback server in this process; the tripwire fails anything else.
const { tripwire, running } = loopbackSuite();

const TIMEOUT_MS = 500;
/** Where the 301 case points: a loopback sink that must never be asked for anything. */
let redirectTarget: CountingSink | null = null;
const EXCERPT_CAP = 4096;
const ROUNDS = scale(1, 10);
const EVENTS_PER_CASE = scale(1, 3);

/** What the destination does on the n-th attempt (0-based) of one delivery. */
type Script = (socket: Socket, attempt: number, request: FaultRequest, server: FaultServer) => void;

interface FaultCase {
  id: string;
  what: string;
  script: Script;
  /** Promised outcome, checked against the attempt log. */
  expect: (detail: DeliveryDetail, server: FaultServer) => void;
}

type LogRow = [status: number | null, error: string | null, outcome: string];
const logOf = (detail: DeliveryDetail): LogRow[] => detail.attemptLog.map((a) => [a.status, a.errorCode, a.outcome]);
const socketErrors = ['ECONNRESET', 'UND_ERR_SOCKET', 'EPIPE', 'UND_ERR_CLOSED'];

const CASES: FaultCase[] = [
  {
    id: 'http-500-recovers',
    what: '500 twice, then 200',
    script: (s, n) => respond(s, n < 2 ? 500 : 200),
    expect: (d) => {
      expect(d.state).toBe('delivered');
      expect(logOf(d)).toEqual([[500, null, 'pending'], [500, null, 'pending'], [200, null, 'delivered']]);
    },
  },
  {
    id: 'http-500-always',
    what: '500 on every attempt',
    script: (s) => respond(s, 500, {}, '{"error":"down"}'),
    expect: (d) => {
      expect(d.state).toBe('dead');
      expect(d.deadReason).toContain('retries exhausted after 3 attempts');
      expect(logOf(d)).toEqual([[500, null, 'pending'], [500, null, 'pending'], [500, null, 'dead']]);
      expect(d.attemptLog.every((a) => a.responseExcerpt === '{"error":"down"}')).toBe(true);
    },
  },
  {
    id: 'http-503-retry-after',
    what: '503 with Retry-After: 1, then 200',
    script: (s, n) => (n === 0 ? respond(s, 503, { 'retry-after': '1' }) : respond(s, 200)),
    expect: (d) => {
      expect(d.state).toBe('delivered');
      expect(logOf(d)).toEqual([[503, null, 'pending'], [200, null, 'delivered']]);
      // The schedule says ~100 ms; Retry-After asks for 1 s and wins.
      expect(d.attemptLog[1]!.startedAt - d.attemptLog[0]!.startedAt).toBeGreaterThanOrEqual(990);
    },
  },
  {
    id: 'http-429',
    what: '429 twice, then 200',
    script: (s, n) => respond(s, n < 2 ? 429 : 200),
    expect: (d) => {
      expect(d.state).toBe('delivered');
      expect(logOf(d)).toEqual([[429, null, 'pending'], [429, null, 'pending'], [200, null, 'delivered']]);
    },
  },
  {
    id: 'http-410',
    what: '410 Gone',
    script: (s) => respond(s, 410, {}, '{"error":"gone"}'),
    expect: (d) => {
      expect(d.state).toBe('dead');
      expect(logOf(d)).toEqual([[410, null, 'dead']]);
    },
  },
  {
    id: 'http-301',
    what: '301 to another (allowlisted) loopback server',
    script: (s) => respond(s, 301, { location: redirectTarget!.url }),
    expect: (d) => {
      expect(d.state).toBe('dead');
      expect(logOf(d)).toEqual([[301, null, 'dead']]);
      expect(d.deadReason).toContain(`Location: ${redirectTarget!.url}`);
      expect(redirectTarget!.received).toHaveLength(0);
    },
  },
  {
    id: 'hang-before-headers',
    what: 'no answer on the first attempt (connection held open), then 200',
    script: (s, n) => (n === 0 ? undefined : respond(s, 200)),
    expect: (d) => {
      expect(d.state).toBe('delivered');
      expect(logOf(d)).toEqual([[null, 'timeout', 'pending'], [200, null, 'delivered']]);
      expect(d.attemptLog[0]!.durationMs).toBeGreaterThanOrEqual(TIMEOUT_MS - 20);
      expect(d.attemptLog[0]!.durationMs).toBeLessThan(TIMEOUT_MS + 1000);
    },
  },
  {
    id: 'hang-always',
    what: 'never answers',
    script: () => undefined,
    expect: (d) => {
      expect(d.state).toBe('dead');
      expect(logOf(d)).toEqual([[null, 'timeout', 'pending'], [null, 'timeout', 'pending'], [null, 'timeout', 'dead']]);
      expect(d.attemptLog.every((a) => a.durationMs < TIMEOUT_MS + 1000)).toBe(true);
    },
  },
  {
    id: 'stall-mid-body-200',
    what: '200 with headers and part of the body, then silence',
    script: (s) => stallMidBody(s, 200),
    expect: (d, server) => {
      // The status is the receiver's verdict: delivered, and not sent again.
      expect(d.state).toBe('delivered');
      expect(d.attemptLog).toHaveLength(1);
      expect(d.attemptLog[0]).toMatchObject({ status: 200, outcome: 'delivered', responseExcerpt: 'partial body, then silence' });
      expect(d.attemptLog[0]!.durationMs).toBeLessThan(TIMEOUT_MS + 1000);
      expect(server.requests.filter((r) => r.headers['x-hookrelay-delivery'] === `dlv_${d.id}`)).toHaveLength(1);
    },
  },
  {
    id: 'stall-mid-body-503',
    what: '503 with part of the body then silence, then 200',
    script: (s, n) => (n === 0 ? stallMidBody(s, 503) : respond(s, 200)),
    expect: (d) => {
      expect(d.state).toBe('delivered');
      expect(logOf(d).map(([status, , outcome]) => [status, outcome])).toEqual([[503, 'pending'], [200, 'delivered']]);
    },
  },
  {
    id: 'reset-destroy',
    what: 'socket.destroy() before answering, then 200',
    script: (s, n) => (n === 0 ? s.destroy() : respond(s, 200)),
    expect: (d) => {
      expect(d.state).toBe('delivered');
      expect(d.attemptLog).toHaveLength(2);
      expect(d.attemptLog[0]).toMatchObject({ status: null, outcome: 'pending' });
      expect(socketErrors).toContain(d.attemptLog[0]!.errorCode);
    },
  },
  {
    id: 'reset-rst',
    what: 'TCP RST (resetAndDestroy) before answering, then 200',
    script: (s, n) => (n === 0 ? s.resetAndDestroy() : respond(s, 200)),
    expect: (d) => {
      expect(d.state).toBe('delivered');
      expect(d.attemptLog).toHaveLength(2);
      expect(d.attemptLog[0]).toMatchObject({ status: null, outcome: 'pending' });
      expect(socketErrors).toContain(d.attemptLog[0]!.errorCode);
    },
  },
  {
    id: 'reset-always',
    what: 'TCP RST before answering, on every attempt',
    script: (s) => s.resetAndDestroy(),
    expect: (d) => {
      // The first lost connection is sent again at once, outside the schedule; the schedule's three attempts follow.
      expect(d.state).toBe('dead');
      expect(d.deadReason).toContain('retries exhausted after 4 attempts');
      expect(d.attemptLog.map((a) => [a.status, a.outcome])).toEqual([[null, 'pending'], [null, 'pending'], [null, 'pending'], [null, 'dead']]);
      expect(d.attemptLog.every((a) => socketErrors.includes(a.errorCode!))).toBe(true);
    },
  },
  {
    id: 'close-without-response',
    what: 'FIN without a response, then 200',
    script: (s, n) => (n === 0 ? s.end() : respond(s, 200)),
    expect: (d) => {
      expect(d.state).toBe('delivered');
      expect(d.attemptLog).toHaveLength(2);
      expect(d.attemptLog[0]).toMatchObject({ status: null, outcome: 'pending' });
      expect(socketErrors).toContain(d.attemptLog[0]!.errorCode);
    },
  },
  {
    id: 'slow-1-byte-per-second',
    what: 'the response trickles at 1 byte/s',
    script: (s, _n, _r, server) => trickle(s, server, 'HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok', 1000),
    expect: (d) => {
      expect(d.state).toBe('dead');
      expect(logOf(d)).toEqual([[null, 'timeout', 'pending'], [null, 'timeout', 'pending'], [null, 'timeout', 'dead']]);
      expect(d.attemptLog.every((a) => a.durationMs < TIMEOUT_MS + 1000)).toBe(true);
    },
  },
  {
    id: 'huge-body-500',
    what: '500 with a 50 MB body, then 200',
    script: (s, n) => (n === 0 ? hugeBody(s, 500, 50 * 1024 * 1024) : respond(s, 200)),
    expect: (d) => {
      expect(d.state).toBe('delivered');
      expect(logOf(d).map(([status, , outcome]) => [status, outcome])).toEqual([[500, 'pending'], [200, 'delivered']]);
      expect(Buffer.byteLength(d.attemptLog[0]!.responseExcerpt ?? '')).toBe(EXCERPT_CAP);
    },
  },
];

function ruleFile(id: string, url: string, extra = ''): string {
  return `id: ${id}\non: [transfer:succeeded]\nwhere:\n  result.faultCase: ${id}\nto:\n  url: ${url}\ntimeout: ${TIMEOUT_MS}ms\nretry:\n  schedule: [0s, 100ms, 100ms]\n${extra}`;
}

function eventFor(faultCase: string): Buffer {
  const body = sampleTransferSucceeded();
  return Buffer.from(JSON.stringify({ ...body, result: { ...body.result, faultCase } }));
}

const sha = (raw: Buffer): string => createHash('sha256').update(raw).digest('hex');

/** Starts one fault server per case (its own origin), keyed by attempt number per delivery id. */
async function startCaseServers(cases: FaultCase[]): Promise<Map<string, FaultServer>> {
  const servers = new Map<string, FaultServer>();
  for (const c of cases) {
    const attempts = new Map<string, number>();
    const server = await startFaultServer((socket, request, self) => {
      const id = request.headers['x-hookrelay-delivery'] ?? '';
      const n = attempts.get(id) ?? 0;
      attempts.set(id, n + 1);
      c.script(socket, n, request, self);
    });
    running.push(server);
    servers.set(c.id, server);
  }
  return servers;
}

/** Posts an event only the healthy rule takes every `everyMs`, and measures how long each took to arrive. */
function healthyTicker(app: TestReceiver, sink: CountingSink, everyMs: number) {
  const posted = new Map<string, number>();
  let stopped = false;
  const failures: string[] = [];
  const loop = (async () => {
    while (!stopped) {
      const raw = eventFor('none');
      const status = await request(app.webhookUrl(), {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-service-signature': signHmacSha256Hex(TEST_SECRET, raw) },
        body: raw,
        headersTimeout: 5000,
        bodyTimeout: 5000,
      }).then(async (r) => (await r.body.text(), r.statusCode), (err: Error) => err.message);
      if (status === 200) posted.set(sha(raw), Date.now());
      else failures.push(`ingest answered ${status}`);
      await sleep(everyMs);
    }
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
      await eventually(() => [...posted.keys()].every((hash) => sink.received.some((r) => r.bodySha256 === hash)), 10_000, 'every healthy event at the healthy sink');
      const latencies = [...posted].map(([hash, at]) => sink.received.find((r) => r.bodySha256 === hash)!.receivedAt - at);
      return { count: posted.size, maxLatencyMs: Math.max(...latencies), failures };
    },
  };
}

async function settledDeliveries(app: TestReceiver, ruleIds: Set<string>, expected: number): Promise<DeliveryDetail[]> {
  return eventually(
    async () => {
      const all = [];
      for (const ruleId of ruleIds) all.push(...(await app.store.listDeliveries({ ruleId }, { limit: 500 })).items);
      if (all.length < expected || all.some((d) => d.state === 'pending')) return null;
      return Promise.all(all.map(async (d) => (await app.store.getDelivery(d.id))!));
    },
    timeLimit(20_000, 60_000),
    'every fault delivery delivered or dead',
  );
}

describe('downstream fault matrix', () => {
  it(
    'keeps each promised outcome, records every attempt, and never holds up a healthy destination',
    async () => {
      const started = Date.now();
      const servers = await startCaseServers(CASES);
      const healthy = await startCountingSink();
      redirectTarget = await startCountingSink();
      running.push(healthy, redirectTarget);
      const rules: Record<string, string> = { 'healthy.yaml': `id: healthy\non: [transfer:succeeded]\nto:\n  url: ${healthy.url}\ntimeout: 2s\n` };
      for (const c of CASES) rules[`${c.id}.yaml`] = ruleFile(c.id, servers.get(c.id)!.url);
      // A small worker (16 slots) so stalled destinations would starve the healthy one if slots leaked;
      // the breaker threshold is out of the way: outcomes here come from the retry schedule alone.
      const app = await startTestReceiver({ rulesDir: rulesDirWith(rules), delivery: { ...TEST_DELIVERY, maxInFlight: 16, failureThreshold: 1000 } });
      running.push(app);

      let verified = 0;
      const checked = new Set<number>();
      let healthyEvents = 0;
      let maxHealthyLatency = 0;
      for (let round = 0; round < ROUNDS; round++) {
        const ticker = healthyTicker(app, healthy, 50);
        for (const c of CASES) {
          for (let i = 0; i < EVENTS_PER_CASE; i++) expect((await postSigned(app.webhookUrl(), eventFor(c.id), TEST_SECRET)).status).toBe(200);
        }
        const details = await settledDeliveries(app, new Set(CASES.map((c) => c.id)), CASES.length * EVENTS_PER_CASE * (round + 1));
        const health = await ticker.stop();
        for (const c of CASES) {
          const mine = details.filter((d) => d.ruleId === c.id);
          expect(mine, c.id).toHaveLength(EVENTS_PER_CASE * (round + 1));
          for (const detail of mine.filter((d) => !checked.has(d.id))) {
            checked.add(detail.id);
            try {
              c.expect(detail, servers.get(c.id)!);
            } catch (err) {
              throw new Error(`case ${c.id} (${c.what}), delivery ${detail.id}: ${(err as Error).message}\nattempts: ${JSON.stringify(detail.attemptLog.map(({ responseExcerpt: _r, ...a }) => a))}`);
            }
            // Every attempt the destination saw is in the log, and every logged attempt reached it.
            expect(servers.get(c.id)!.requests.filter((r) => r.headers['x-hookrelay-delivery'] === `dlv_${detail.id}`).length, c.id).toBe(detail.attemptLog.length);
            expect(detail.attempts).toBe(detail.attemptLog.length);
            expect(detail.attemptLog.every((a) => Buffer.byteLength(a.responseExcerpt ?? '') <= EXCERPT_CAP)).toBe(true);
            verified += 1;
          }
        }
        expect(health.failures).toEqual([]);
        healthyEvents += health.count;
        maxHealthyLatency = Math.max(maxHealthyLatency, health.maxLatencyMs);
      }
      // No stuck worker: nothing in flight once every fault has played out.
      await eventually(() => app.delivery!.activeAttempts === 0, 5_000, 'no attempt in flight');
      report('downstream-faults/matrix', {
        cases: CASES.length, deliveriesVerified: verified, passed: verified, lost: 0,
        healthyEvents, maxHealthyLatencyMs: maxHealthyLatency, seconds: ((Date.now() - started) / 1000).toFixed(1),
      });
      expect(maxHealthyLatency).toBeLessThan(1500);
      expect(tripwire.violations).toEqual([]);
    },
    timeLimit(60_000, 600_000),
  );

  it(
    'reads only a 4 KiB excerpt of a 50 MB answer: memory stays bounded and the connection is cut',
    async () => {
      const size = 50 * 1024 * 1024;
      const server = await startFaultServer((socket) => hugeBody(socket, 200, size));
      running.push(server);
      const app = await startTestReceiver({ rulesDir: rulesDirWith({ 'big.yaml': `id: big\non: [transfer:succeeded]\nto:\n  url: ${server.url}\ntimeout: 5s\n` }), delivery: TEST_DELIVERY });
      running.push(app);
      const repeats = scale(3, 20);
      // Peak RSS during each attempt over RSS just before it: buffering the answer would add 50 MB at once.
      let baseline = process.memoryUsage().rss;
      let peak = baseline;
      let worstGrowth = 0;
      const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 2);
      try {
        for (let i = 0; i < repeats; i++) {
          baseline = process.memoryUsage().rss;
          peak = baseline;
          const reply = await postSigned(app.webhookUrl(), sampleTransferSucceeded(), TEST_SECRET);
          const delivery = await eventually(async () => {
            const d = (await app.store.listDeliveries({ eventId: reply.json.id }, { limit: 1 })).items[0];
            return d && d.state !== 'pending' ? (await app.store.getDelivery(d.id))! : null;
          }, 10_000, 'the 50 MB delivery settled');
          expect(delivery.state).toBe('delivered');
          expect(delivery.attemptLog).toHaveLength(1);
          expect(Buffer.byteLength(delivery.attemptLog[0]!.responseExcerpt ?? '')).toBe(EXCERPT_CAP);
          expect(delivery.attemptLog[0]!.durationMs).toBeLessThan(2000);
          worstGrowth = Math.max(worstGrowth, peak - baseline);
        }
      } finally {
        clearInterval(sampler);
      }
      // Sockets are closed after the excerpt: far less than one body went over the wire per attempt.
      await sleep(100);
      const sentPerAttempt = server.bytesWritten() / repeats;
      const growthMb = worstGrowth / 1024 / 1024;
      report('downstream-faults/50MB-body', { attempts: repeats, passed: repeats, lost: 0, worstRssGrowthPerAttemptMb: growthMb.toFixed(1), mbSentPerAttempt: (sentPerAttempt / 1024 / 1024).toFixed(1) });
      expect(sentPerAttempt).toBeLessThan(size / 4);
      expect(growthMb).toBeLessThan(25);
      expect(tripwire.violations).toEqual([]);
    },
    timeLimit(30_000, 120_000),
  );
});
