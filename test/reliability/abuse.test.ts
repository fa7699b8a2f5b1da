import type { Socket } from 'node:net';
import net from 'node:net';
import { Agent, request } from 'undici';
import { describe, expect, it } from 'vitest';
import { adminTokenMatches } from '../../src/identity/admin-token.js';
import { sampleTransferSucceeded } from '../../src/samples/transfer-succeeded.js';
import { signHmacSha256Hex } from '../../src/signing/hmac-sha256-hex.js';
import type { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { runCli } from '../helpers/cli-process.js';
import { postSigned, send, type Reply } from '../helpers/http.js';
import { startTestReceiver, TEST_SECRET, type TestReceiver } from '../helpers/receiver.js';
import { eventually, rulesDirWith, TEST_DELIVERY } from '../helpers/rules.js';
import { startCountingSink } from './support/counting-sink.js';
import { loopbackSuite } from './support/loopback-suite.js';
import { rawRequest, requestHead } from './support/raw-http.js';
import { report, scale, sleep, timeLimit } from './support/soak.js';

// All traffic is loopback: the receiver runs in this process on 127.0.0.1, bounded in connections and time.
const { tripwire, running } = loopbackSuite();

const HEADERS_TIMEOUT_MS = 1000;
const UNLIMITED_FAILURES = { max: 1_000_000, windowMs: 1000 };
const REQUEST_TIMEOUT_MS = 2000;

async function receiver(overrides: Record<string, unknown> = {}): Promise<TestReceiver> {
  const app = await startTestReceiver({ delivery: { enabled: false }, retention: { enabled: false }, ...overrides });
  running.push(app);
  return app;
}

/** Normal signed posts at a steady pace for `durationMs`: every one must succeed, quickly. */
async function normalTraffic(app: TestReceiver, durationMs: number, everyMs = 50): Promise<{ count: number; failures: string[]; maxLatencyMs: number }> {
  const agent = new Agent({ connections: 4 });
  const failures: string[] = [];
  let count = 0;
  let maxLatencyMs = 0;
  const end = Date.now() + durationMs;
  try {
    while (Date.now() < end) {
      const raw = Buffer.from(JSON.stringify(sampleTransferSucceeded()));
      const started = performance.now();
      try {
        const response = await request(app.webhookUrl(), {
          method: 'POST',
          dispatcher: agent,
          headers: { 'content-type': 'application/json', 'x-service-signature': signHmacSha256Hex(TEST_SECRET, raw) },
          body: raw,
          headersTimeout: 5000,
          bodyTimeout: 5000,
        });
        await response.body.text();
        if (response.statusCode !== 200) failures.push(`HTTP ${response.statusCode}`);
      } catch (err) {
        failures.push((err as Error).message);
      }
      maxLatencyMs = Math.max(maxLatencyMs, performance.now() - started);
      count += 1;
      await sleep(everyMs);
    }
  } finally {
    await agent.destroy();
  }
  return { count, failures, maxLatencyMs: Math.round(maxLatencyMs) };
}

describe('abuse: slow clients are cut off by the server timeouts without hurting anyone else', () => {
  it(
    'slowloris: headers one byte at a time, and bodies trickled, are cut near the configured limits while normal requests go through',
    async () => {
      const app = await receiver({ server: { headersTimeoutMs: HEADERS_TIMEOUT_MS, requestTimeoutMs: REQUEST_TIMEOUT_MS, keepAliveTimeoutMs: 5000, shutdownGraceMs: 2000 } });
      const before = ((app.store as SqliteStore).db.prepare('SELECT count(*) AS n FROM events').get() as { n: number }).n;
      const slowHeaders = Array.from({ length: scale(20, 100) }, () => {
        const head = `POST /webhooks/checkout HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nX-Padding: ${'a'.repeat(2000)}`;
        return rawRequest(app.port, head.split(''), { gapMs: 100, timeoutMs: 10_000 });
      });
      const raw = Buffer.from(JSON.stringify(sampleTransferSucceeded()));
      const trickledBodies = Array.from({ length: scale(20, 100) }, () => {
        const head = requestHead('POST', '/webhooks/checkout', [['Host', 'x'], ['Content-Type', 'application/json'], ['X-Service-Signature', signHmacSha256Hex(TEST_SECRET, raw)], ['Content-Length', raw.length]]);
        return rawRequest(app.port, [head, ...raw.toString('latin1').split('')], { gapMs: 100, timeoutMs: 10_000 });
      });
      const traffic = await normalTraffic(app, 3000);
      const cutHeaders = await Promise.all(slowHeaders);
      const cutBodies = await Promise.all(trickledBodies);
      const slowest = (list: typeof cutHeaders): number => Math.round(Math.max(...list.map((r) => r.durationMs)));
      report('abuse/slowloris', {
        slowHeaderClients: cutHeaders.length, trickledBodyClients: cutBodies.length, headersCutAfterMs: slowest(cutHeaders), bodiesCutAfterMs: slowest(cutBodies),
        normalRequests: traffic.count, normalFailures: traffic.failures.length, normalMaxLatencyMs: traffic.maxLatencyMs,
      });
      expect(traffic.failures).toEqual([]);
      expect(traffic.count).toBeGreaterThan(20);
      expect(traffic.maxLatencyMs).toBeLessThan(1000);
      for (const cut of [...cutHeaders, ...cutBodies]) {
        // The server hung up (Node answers 408 before closing when it can); the client did not give up first.
        expect(cut.error).not.toBe('timeout');
        expect(cut.closed).toBe(true);
        // The body says which part of the server answered, should another status ever show up.
        if (cut.status !== 0) expect(cut.status, cut.body.toString('utf8')).toBe(408);
      }
      expect(slowest(cutHeaders)).toBeLessThan(HEADERS_TIMEOUT_MS + 1500);
      expect(slowest(cutBodies)).toBeLessThan(REQUEST_TIMEOUT_MS + 1500);
      // A cut-off body is never stored.
      expect(((app.store as SqliteStore).db.prepare('SELECT count(*) AS n FROM events').get() as { n: number }).n).toBe(before + traffic.count);
    },
    timeLimit(30_000, 60_000),
  );

  it('a request pipelined behind a streaming answer that stalls ends the connection without writing into the stream', async () => {
    const app = await receiver({
      admin: { token: ADMIN_TOKEN, authFailures: UNLIMITED_FAILURES },
      server: { headersTimeoutMs: HEADERS_TIMEOUT_MS, requestTimeoutMs: REQUEST_TIMEOUT_MS, keepAliveTimeoutMs: 5000, shutdownGraceMs: 2000 },
    });
    const stream = requestHead('GET', '/admin/api/events/stream', [['Host', 'x'], ['Authorization', `Bearer ${ADMIN_TOKEN}`]]);
    const stalled = 'POST /webhooks/checkout HTTP/1.1\r\nHost: x\r\nX-Padding: aaa';
    const cut = await rawRequest(app.port, stream + stalled, { timeoutMs: HEADERS_TIMEOUT_MS + 5000 });
    expect(cut.error).not.toBe('timeout');
    expect(cut.closed).toBe(true);
    expect(cut.status).toBe(200);
    expect(cut.headers['content-type']).toContain('text/event-stream');
    // No status line of a second answer inside the stream's bytes.
    expect(cut.body.toString('latin1')).not.toContain('HTTP/1.1');
  });

  it(
    '1,000 connections held open: normal requests still succeed meanwhile',
    async () => {
      const app = await receiver({ server: { headersTimeoutMs: 20_000, requestTimeoutMs: 30_000, keepAliveTimeoutMs: 5000, shutdownGraceMs: 2000 } });
      const count = scale(1000, 3000);
      const sockets: Socket[] = [];
      try {
        await Promise.all(
          Array.from({ length: count }, (_, i) =>
            new Promise<void>((resolve) => {
              const socket = net.connect({ port: app.port, host: '127.0.0.1' }, () => {
                // Half of them idle, half of them mid-headers.
                if (i % 2 === 0) socket.write('POST /webhooks/checkout HTTP/1.1\r\nHost: x\r\n');
                resolve();
              });
              socket.on('error', () => resolve());
              sockets.push(socket);
            }),
          ),
        );
        const open = sockets.filter((s) => !s.destroyed).length;
        const traffic = await normalTraffic(app, 2000, 20);
        const health = await send(`${app.url}/healthz`);
        const stillOpen = sockets.filter((s) => !s.destroyed).length;
        report('abuse/1000-connections', { held: open, stillOpenAfter: stillOpen, normalRequests: traffic.count, normalFailures: traffic.failures.length, normalMaxLatencyMs: traffic.maxLatencyMs });
        expect(open).toBe(count);
        expect(stillOpen).toBe(count);
        expect(health.status).toBe(200);
        expect(traffic.failures).toEqual([]);
        expect(traffic.count).toBeGreaterThan(20);
        expect(traffic.maxLatencyMs).toBeLessThan(1000);
      } finally {
        for (const socket of sockets) socket.destroy();
      }
    },
    timeLimit(30_000, 60_000),
  );
});

// ---- admin API and console ------------------------------------------------------------------------------

const ADMIN_TOKEN = 'adm_Abuse-Test-Token-0123456789abcdef';

function adminCall(app: TestReceiver, method: string, path: string, headers: Record<string, string> = {}, body?: unknown): Promise<Reply> {
  return send(`${app.url}${path}`, {
    method,
    headers: { ...(body !== undefined && { 'content-type': 'application/json' }), ...headers },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
}

function cookiesOf(reply: Reply): Record<string, string> {
  const setCookie = reply.headers['set-cookie'];
  const list = Array.isArray(setCookie) ? setCookie : setCookie ? [setCookie] : [];
  return Object.fromEntries(list.map((c) => c.split(';')[0]!.split('=')).map(([k, ...v]) => [k!, v.join('=')]));
}

describe('abuse: an upload over the limit always gets its 413', () => {
  it(
    'a sender still streaming a declared over-limit body reads the 413 and its JSON body every time, also after abusive traffic',
    async () => {
      const maxBody = 64 * 1024;
      const app = await receiver({ maxBody });
      const upload = (declared: number, sent: number, bodyAfterMs = 0) => {
        const head = requestHead('POST', '/webhooks/checkout', [['Host', 'x'], ['Content-Type', 'application/json'], ['X-Service-Signature', 'sha256=00'], ['Content-Length', declared]]);
        const body = Buffer.alloc(sent, 0x20);
        const pieces = Array.from({ length: Math.ceil(sent / 16_384) }, (_, i) => body.subarray(i * 16_384, (i + 1) * 16_384));
        return rawRequest(app.port, [head, ...pieces], { streamed: true, bodyAfterMs, timeoutMs: 10_000 });
      };
      // Abusive traffic first: uploads cut off mid-body, garbage framing and half-sent heads, all at once.
      await Promise.all(
        Array.from({ length: scale(60, 300) }, (_, i) => {
          if (i % 3 === 0) return rawRequest(app.port, 'GARBAGE\r\n\r\n', { timeoutMs: 3000 });
          if (i % 3 === 1) return rawRequest(app.port, 'POST /webhooks/checkout HTTP/1.1\r\nHost: x\r\n', { timeoutMs: 200 });
          return upload(4 * maxBody, maxBody / 2).then((r) => r);
        }),
      );
      const outcomes: string[] = [];
      const rounds = scale(60, 300);
      for (let round = 0; round < rounds; round += 1) {
        // Declared far over the limit, the body streamed from just before to just after the answer comes
        // (a sender that writes its head, then its body): the client is still sending when it is answered.
        const declared = 16 * maxBody;
        const response = await upload(declared, round % 2 === 0 ? declared : 8 * maxBody, round % 4);
        let code: unknown = null;
        try {
          code = JSON.parse(response.body.toString()).error?.code;
        } catch {
          code = 'unparsable body';
        }
        outcomes.push(`${response.status} ${String(code)}${response.error ? ` ${response.error}` : ''}`);
      }
      const counts = Object.fromEntries([...new Set(outcomes)].map((o) => [o, outcomes.filter((x) => x === o).length]));
      report('abuse/over-limit-upload', { rounds, ...counts });
      expect(counts).toEqual({ '413 payload_too_large': rounds });
      expect((await send(`${app.url}/healthz`)).status).toBe(200);
    },
    timeLimit(60_000, 180_000),
  );
});

describe('abuse: the admin API and console refuse whoever has no business there', () => {
  it('missing, wrong and look-alike tokens get the same 401 on every route; the right one works', async () => {
    // Every wrong token here comes from one address: the failed-authentication limit is lifted to see each answer.
    const app = await receiver({ admin: { token: ADMIN_TOKEN, authFailures: UNLIMITED_FAILURES } });
    const id = (await postSigned(app.webhookUrl(), sampleTransferSucceeded(), TEST_SECRET)).json.id as number;
    const routes: [string, string, unknown?][] = [
      ['GET', '/admin/api/events'], ['GET', `/admin/api/events/${id}`], ['POST', `/admin/api/events/${id}/replay`, {}],
      ['POST', `/admin/api/events/${id}/resend`, { url: 'http://127.0.0.1:9/x', signing: { mode: 'none' } }], ['POST', '/admin/api/events/replay', { filter: {} }],
      ['GET', '/admin/api/deliveries'], ['POST', '/admin/api/deliveries/retry', { filter: {} }], ['GET', '/admin/api/jobs'],
      ['GET', '/admin/api/rules'], ['GET', '/admin/api/openapi.json'],
    ];
    const wrong: [string, Record<string, string>][] = [
      ['no header', {}],
      ['empty bearer', { authorization: 'Bearer ' }],
      ['wrong token', { authorization: 'Bearer nope' }],
      ['one character off', { authorization: `Bearer ${ADMIN_TOKEN.slice(0, -1)}X` }],
      ['prefix', { authorization: `Bearer ${ADMIN_TOKEN.slice(0, 20)}` }],
      ['token plus suffix', { authorization: `Bearer ${ADMIN_TOKEN}x` }],
      ['upper-cased token', { authorization: `Bearer ${ADMIN_TOKEN.toUpperCase()}` }],
      ['Basic scheme', { authorization: `Basic ${Buffer.from(`admin:${ADMIN_TOKEN}`).toString('base64')}` }],
      ['token without scheme', { authorization: ADMIN_TOKEN }],
      ['two tokens', { authorization: `Bearer ${ADMIN_TOKEN} ${ADMIN_TOKEN}` }],
      ['the ingest secret', { authorization: `Bearer ${TEST_SECRET}` }],
      ['token as a cookie', { cookie: `hookrelay_session=${ADMIN_TOKEN}` }],
      ['token in another header', { 'x-admin-token': ADMIN_TOKEN }],
    ];
    let refused = 0;
    for (const [method, path, body] of routes) {
      const bodies = new Set<string>();
      for (const [what, headers] of wrong) {
        const reply = await adminCall(app, method, path, headers, body);
        expect(reply.status, `${what}: ${method} ${path}`).toBe(401);
        expect(reply.json.error.code).toBe('unauthorized');
        expect(reply.headers['www-authenticate']).toMatch(/^Bearer/);
        bodies.add(reply.json.error.code);
        refused += 1;
      }
      // Nothing in the answer tells a near miss from a wild guess.
      expect(bodies.size).toBe(1);
      // With the token the request gets past the check (the resend URL here is then refused by the SSRF guard).
      const ok = await adminCall(app, method, path, { authorization: `Bearer ${ADMIN_TOKEN}` }, body);
      expect([200, 201, 202, 400], `${method} ${path} with the token: ${ok.text.slice(0, 200)}`).toContain(ok.status);
    }
    // The token in the query string is not a credential either.
    expect((await adminCall(app, 'GET', `/admin/api/events?token=${ADMIN_TOKEN}`)).status).toBe(401);
    // The ingest route never takes the admin token as a signature.
    const raw = Buffer.from(JSON.stringify(sampleTransferSucceeded()));
    expect((await send(app.webhookUrl(), { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${ADMIN_TOKEN}` }, body: raw })).status).toBe(401);
    report('abuse/admin-auth', { routes: routes.length, refusedRequests: refused, variants: wrong.length });
  });

  it('a timing probe learns nothing: a near-miss token costs what a wild guess costs', async () => {
    const app = await receiver({ admin: { token: ADMIN_TOKEN, authFailures: UNLIMITED_FAILURES } });
    const nearMiss = `${ADMIN_TOKEN.slice(0, -1)}X`;
    const farMiss = `X${ADMIN_TOKEN.slice(1)}`;
    const shorter = 'x';
    // In process, where the timing is least noisy: interleaved batches, the best median of each kind.
    const batch = (given: string): number => {
      const started = process.hrtime.bigint();
      for (let i = 0; i < 2000; i++) adminTokenMatches(given, ADMIN_TOKEN);
      return Number(process.hrtime.bigint() - started);
    };
    for (let i = 0; i < 5; i++) [nearMiss, farMiss, shorter].forEach(batch); // warm up the JIT first
    const best = { near: Infinity, far: Infinity, shorter: Infinity };
    const kinds = [['near', nearMiss], ['far', farMiss], ['shorter', shorter]] as const;
    for (let round = 0; round < 40; round++) {
      for (const [kind, given] of round % 2 === 0 ? kinds : [...kinds].reverse()) best[kind] = Math.min(best[kind], batch(given));
    }
    // Over HTTP: the same answer, and no consistent gap between near and far misses.
    const median = (values: number[]): number => values.sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
    const overHttp = { near: [] as number[], far: [] as number[] };
    for (let i = 0; i < 100; i++) {
      for (const [kind, token] of [['near', nearMiss], ['far', farMiss]] as const) {
        const started = performance.now();
        const reply = await adminCall(app, 'GET', '/admin/api/events', { authorization: `Bearer ${token}` });
        overHttp[kind].push(performance.now() - started);
        expect(reply.status).toBe(401);
      }
    }
    const ratios = { inProcessNearFar: best.near / best.far, inProcessNearShort: best.near / best.shorter, httpNearFar: median(overHttp.near) / median(overHttp.far) };
    report('abuse/timing-probe', Object.fromEntries(Object.entries(ratios).map(([k, v]) => [k, v.toFixed(2)])));
    for (const ratio of Object.values(ratios)) {
      expect(ratio).toBeGreaterThan(0.5);
      expect(ratio).toBeLessThan(2);
    }
  }, 60_000);

  it('console: log-in needs the token and a same-origin request; session mutations need the CSRF token, its cookie and this origin', async () => {
    const app = await receiver({ admin: { token: ADMIN_TOKEN } });
    const id = (await postSigned(app.webhookUrl(), sampleTransferSucceeded(), TEST_SECRET)).json.id as number;
    const host = new URL(app.url).host;
    const origin = `http://${host}`;
    const login = (headers: Record<string, string>, token: string) =>
      adminCall(app, 'POST', '/console/login', { 'content-type': 'application/json', ...headers }, { token });

    expect((await send(`${app.url}/console`)).status).toBe(303);
    expect((await login({ origin }, 'wrong')).status).toBe(401);
    expect((await login({ origin }, '')).status).toBe(401);
    expect((await login({ origin: 'http://evil.example' }, ADMIN_TOKEN)).status).toBe(403);
    expect((await login({ 'sec-fetch-site': 'cross-site' }, ADMIN_TOKEN)).status).toBe(403);
    expect((await login({ origin: 'null' }, ADMIN_TOKEN)).status).toBe(403);
    const ok = await login({ origin }, ADMIN_TOKEN);
    expect(ok.status).toBe(200);
    const cookies = cookiesOf(ok);
    expect(cookies.hookrelay_session).toBeTruthy();
    expect(cookies.hookrelay_csrf).toBeTruthy();
    expect(ok.text).not.toContain(ADMIN_TOKEN);
    const session = `hookrelay_session=${cookies.hookrelay_session}`;
    const both = `${session}; hookrelay_csrf=${cookies.hookrelay_csrf}`;
    const csrf = cookies.hookrelay_csrf!;

    // Reads need only the session.
    expect((await adminCall(app, 'GET', '/admin/api/events', { cookie: session })).status).toBe(200);
    const replay = (headers: Record<string, string>) => adminCall(app, 'POST', `/admin/api/events/${id}/replay`, headers, {});
    const refusedMutations: [string, Record<string, string>, number][] = [
      ['no CSRF header', { cookie: both, origin }, 403],
      // One character off, and always different from the real token (whatever its last character is).
      ['wrong CSRF header', { cookie: both, origin, 'x-csrf-token': `${csrf.slice(0, -1)}${csrf.endsWith('A') ? 'B' : 'A'}` }, 403],
      ['CSRF header without its cookie', { cookie: session, origin, 'x-csrf-token': csrf }, 403],
      ['CSRF cookie and header of another value', { cookie: `${session}; hookrelay_csrf=forged`, origin, 'x-csrf-token': 'forged' }, 403],
      ['another origin', { cookie: both, origin: 'http://evil.example', 'x-csrf-token': csrf }, 403],
      ['a look-alike origin', { cookie: both, origin: `http://${host}.evil.example`, 'x-csrf-token': csrf }, 403],
      ['origin null', { cookie: both, origin: 'null', 'x-csrf-token': csrf }, 403],
      ['no origin and no Sec-Fetch-Site', { cookie: both, 'x-csrf-token': csrf }, 403],
      ['Sec-Fetch-Site cross-site', { cookie: both, 'sec-fetch-site': 'cross-site', 'x-csrf-token': csrf }, 403],
      ['Sec-Fetch-Site same-site', { cookie: both, 'sec-fetch-site': 'same-site', 'x-csrf-token': csrf }, 403],
      ['a forged session', { cookie: `hookrelay_session=forged; hookrelay_csrf=${csrf}`, origin, 'x-csrf-token': csrf }, 401],
    ];
    for (const [what, headers, status] of refusedMutations) {
      const reply = await replay(headers);
      expect(reply.status, what).toBe(status);
      expect(reply.json.error.code).toBe(status === 401 ? 'unauthorized' : 'forbidden');
    }
    expect((await adminCall(app, 'POST', '/console/logout', { cookie: both, origin })).status).toBe(403);
    const accepted = await replay({ cookie: both, origin, 'x-csrf-token': csrf });
    expect(accepted.status, accepted.text).toBe(201);
    expect((await adminCall(app, 'POST', '/console/logout', { cookie: both, origin, 'x-csrf-token': csrf })).status).toBe(204);
    expect((await adminCall(app, 'GET', '/admin/api/events', { cookie: session })).status).toBe(401);
    report('abuse/console-csrf', { refusedMutations: refusedMutations.length, refusedLogins: 5 });
  });

  it('path tricks never reach admin data or files without the token, and never crash', async () => {
    const app = await receiver({ admin: { token: ADMIN_TOKEN } });
    await postSigned(app.webhookUrl(), sampleTransferSucceeded({ email: 'path-trick@example.com' }), TEST_SECRET);
    const paths = [
      '/admin/api/../admin/api/events', '/admin/api/./events', '/admin/api/%2e%2e/admin/api/events', '/admin/api/%2E%2E/api/events',
      '/admin/api/..%2fevents', '/admin%2fapi/events', '/admin/api%2fevents', '//admin/api/events', '/ADMIN/API/events', '/Admin/Api/Events',
      '/admin/api/events/', '/admin/api/events;x', '/admin/api/events%00', '/admin/api/events/%zz', '/admin/api/events/1%2f..%2f..',
      '/console/../admin/api/events', '/console/%2e%2e/admin/api/events', '/console/..%2fadmin/api/events', '/metrics/../admin/api/events',
      '/webhooks/%2e%2e/', '/webhooks/%2e%2e/admin/api/events', '/webhooks/..%2fadmin%2fapi%2fevents', '/webhooks/checkout/../../admin/api/events',
      '/console/assets/../console-router.js', '/console/assets/%2e%2e/console-router.js', '/console/assets/..%2fconsole-router.js',
      '/console/assets/..%2f..%2f..%2f..%2fpackage.json', '/console/assets/%2e%2e%2f%2e%2e%2f%2e%2e%2fadmin-token.js', '/console/assets/....//....//package.json',
      '/console/assets/%252e%252e/console-router.js', '/console/assets/.env', '/console/assets/%00', `/console/assets/..%5c..%5cpackage.json`,
      '/admin.token', '/data/admin.token', '/hookrelay.db', '/../hookrelay.db', '/%2e%2e/%2e%2e/etc/passwd',
    ];
    const leaks: string[] = [];
    for (const path of paths) {
      for (const method of ['GET', 'POST']) {
        const reply = await rawRequest(app.port, requestHead(method, path, [['Host', `127.0.0.1:${app.port}`], ['Connection', 'close'], ['Content-Length', 0]]));
        const body = reply.body.toString('utf8');
        if (reply.status >= 500 || reply.status === 0) leaks.push(`${method} ${path}: HTTP ${reply.status}`);
        if (reply.status >= 200 && reply.status < 300) leaks.push(`${method} ${path}: HTTP ${reply.status} ${body.slice(0, 120)}`);
        for (const secret of ['path-trick@example.com', ADMIN_TOKEN, 'adminTokenMatches', '"devDependencies"', 'SQLite format', 'root:x:0:0']) {
          if (body.includes(secret)) leaks.push(`${method} ${path}: answer contains ${secret}`);
        }
      }
    }
    // With the token: odd spellings still never crash the server (a bad percent-encoding is a 400, not a 500).
    for (const path of paths) {
      const reply = await rawRequest(app.port, requestHead('GET', path, [['Host', `127.0.0.1:${app.port}`], ['Authorization', `Bearer ${ADMIN_TOKEN}`], ['Connection', 'close']]));
      if (reply.status >= 500 || reply.status === 0) leaks.push(`GET ${path} with the token: HTTP ${reply.status} ${reply.body.toString().slice(0, 120)}`);
    }
    expect(leaks).toEqual([]);
    expect((await send(`${app.url}/healthz`)).status).toBe(200);
    report('abuse/path-tricks', { paths: paths.length, requests: paths.length * 3, leaks: leaks.length });
  });
});

describe('abuse: secrets never leave', () => {
  it('the ingest secret (and rule secrets, and the admin token) appear in no log line, error body, metric or export', async () => {
    const ingestSecret = 'ingest-SECRET-7f3a9c1e5b2d4f6a8c0e';
    const ruleToken = 'rule-TOKEN-4b6d8f0a2c4e6a8b';
    const ruleSigning = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    const resendSecret = 'resend-SECRET-1a2b3c4d5e6f';
    const sink = await startCountingSink();
    running.push(sink);
    const app = await startTestReceiver(
      {
        sources: [{ name: 'checkout', secrets: [ingestSecret, 'older-SECRET-0000000000'] }],
        admin: { token: ADMIN_TOKEN },
        delivery: TEST_DELIVERY,
        rulesDir: rulesDirWith({
          'fwd.yaml': `id: fwd\non: [transfer:succeeded]\nto:\n  url: ${sink.url}\n  headers: { Authorization: "Bearer \${RULE_TOKEN}" }\nsign: { scheme: standard-webhooks, secret: "\${RULE_SIGNING}" }\n`,
        }),
      },
      { env: { RULE_TOKEN: ruleToken, RULE_SIGNING: ruleSigning } },
    );
    running.unshift(app);
    const captured: string[] = [];
    const keep = (reply: Reply): Reply => {
      captured.push(JSON.stringify(reply.headers), reply.text);
      return reply;
    };
    // Every kind of request: accepted, duplicate, bad signature, no signature, bad JSON, schema errors, admin reads and writes.
    const body = sampleTransferSucceeded();
    const accepted = keep(await postSigned(app.webhookUrl(), body, ingestSecret));
    keep(await postSigned(app.webhookUrl(), body, ingestSecret));
    keep(await postSigned(app.webhookUrl(), sampleTransferSucceeded(), 'a-wrong-secret'));
    keep(await postSigned(app.webhookUrl(), '{"broken', ingestSecret));
    keep(await postSigned(app.webhookUrl(), { event: 'transfer:succeeded', result: { id: 'x' } }, ingestSecret));
    keep(await send(app.webhookUrl(), { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' }));
    keep(await send(`${app.webhookUrl()}?secret=${ingestSecret}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-service-signature': ingestSecret }, body: '{}' }));
    keep(await send(`${app.url}/webhooks/unknown`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' }));
    await eventually(() => sink.received.length > 0, 5000, 'the forwarded event');
    const auth = { authorization: `Bearer ${ADMIN_TOKEN}` };
    for (const path of ['/admin/api/events', `/admin/api/events/${accepted.json.id}`, '/admin/api/deliveries', '/admin/api/rules', '/admin/api/jobs', '/admin/api/openapi.json', '/readyz', '/healthz', '/metrics']) {
      keep(await send(`${app.url}${path}`, { headers: auth }));
    }
    keep(await adminCall(app, 'POST', `/admin/api/events/${accepted.json.id}/resend`, auth, { url: sink.url, signing: { mode: 'resign', scheme: 'hmac-sha256-hex', secret: resendSecret } }));
    keep(await adminCall(app, 'POST', `/admin/api/events/${accepted.json.id}/resend`, auth, { url: 'http://10.0.0.1/x', signing: { mode: 'resign', scheme: 'hmac-sha256-hex', secret: resendSecret } }));
    keep(await adminCall(app, 'POST', '/admin/api/rules/fwd/dry-run', auth, { eventId: accepted.json.id }));
    keep(await adminCall(app, 'GET', '/admin/api/events', { authorization: `Bearer ${ingestSecret}` }));
    // Exports, as an operator takes them: remote (admin API) and local (the data dir).
    const remoteExport = runCli(['events', 'export', '--url', app.url, '--token', ADMIN_TOKEN]);
    const localExport = runCli(['events', 'export', '--data-dir', app.dataDir]);
    for (const proc of [remoteExport, localExport]) {
      await proc.exited;
      captured.push(proc.stdout(), proc.stderr());
    }
    expect(remoteExport.stdout()).toContain(body.result.id);
    expect(localExport.stdout()).toContain(body.result.id);

    const everything = [app.logText(), ...captured].join('\n');
    const leaks = [ingestSecret, 'older-SECRET-0000000000', ruleToken, ruleSigning, ruleSigning.slice(6), resendSecret, ADMIN_TOKEN].filter((secret) => everything.includes(secret));
    const logLeaks = [ingestSecret, ruleToken, ruleSigning.slice(6), resendSecret, ADMIN_TOKEN].filter((secret) => app.logText().includes(secret));
    report('abuse/secret-leaks', { logLines: app.logLines().length, answersChecked: captured.length, exportsChecked: 2, leaks: leaks.length });
    expect(logLeaks).toEqual([]);
    expect(leaks).toEqual([]);
    expect(tripwire.violations).toEqual([]);
  }, 60_000);
});
