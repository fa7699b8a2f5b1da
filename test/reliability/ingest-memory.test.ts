import net from 'node:net';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import type { BodyBudget } from '../../src/ingest/body-budget.js';
import { sampleTransferSucceeded } from '../../src/samples/transfer-succeeded.js';
import { signHmacSha256Hex } from '../../src/signing/hmac-sha256-hex.js';
import { postSigned, send } from '../helpers/http.js';
import { startTestReceiver, TEST_SECRET, type TestReceiver } from '../helpers/receiver.js';
import { eventually } from '../helpers/rules.js';
import { loopbackSuite } from './support/loopback-suite.js';
import { chunked, rawRequest, requestHead } from './support/raw-http.js';
import { report } from './support/soak.js';

// All traffic is loopback: the receiver runs in this process on 127.0.0.1.
const { running } = loopbackSuite();

const MAX_BODY = 64 * 1024;
const BUDGET = 4 * MAX_BODY;

async function receiver(server: Record<string, unknown> = {}): Promise<TestReceiver> {
  const app = await startTestReceiver({ maxBody: MAX_BODY, delivery: { enabled: false }, retention: { enabled: false }, server: { maxBufferedBytes: BUDGET, ...server } });
  running.push(app);
  return app;
}

/** Records the most the budget ever held, at every reservation. */
function watchPeak(budget: BodyBudget): () => number {
  let peak = 0;
  const reserve = budget.tryReserve.bind(budget);
  budget.tryReserve = (bytes: number): boolean => {
    const fitted = reserve(bytes);
    peak = Math.max(peak, budget.bufferedBytes);
    return fitted;
  };
  return () => peak;
}

interface Holder {
  socket: net.Socket;
  /** The start of what the server answered (empty while it holds the request). */
  answer: () => string;
}

/** Declares `declared` bytes, sends all but the last one, and holds the connection open. */
function holder(port: number, declared = MAX_BODY): Holder {
  const socket = net.connect({ port, host: '127.0.0.1' });
  let answer = '';
  socket.on('error', () => undefined);
  socket.on('data', (chunk: Buffer) => (answer += chunk.toString('latin1')));
  socket.write(requestHead('POST', '/webhooks/checkout', [['Host', 'x'], ['Content-Type', 'application/json'], ['X-Service-Signature', '00'], ['Content-Length', declared]]));
  socket.write(Buffer.alloc(declared - 1, 0x20));
  return { socket, answer: () => answer };
}

const metricValue = (text: string, name: string): number | undefined => {
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined ? undefined : Number(line.split(' ')[1]);
};

describe('abuse: what unauthenticated clients may make the receiver hold is bounded', () => {
  it('caps the bytes buffered over all requests: beyond it 503 server_busy with Retry-After before reading; back to 0 when the clients go', async () => {
    const app = await receiver();
    const peak = watchPeak(app.bodyBudget);
    const holders = Array.from({ length: 12 }, () => holder(app.port));
    // Four bodies fit the budget; the other eight are refused as soon as their head arrives.
    const refused = await eventually(() => {
      const answered = holders.filter((h) => h.answer().includes('\r\n\r\n'));
      return answered.length === 8 && app.bodyBudget.bufferedBytes === BUDGET ? answered : undefined;
    }, 10_000, 'eight refusals and a full budget');
    for (const h of refused) {
      expect(h.answer()).toMatch(/^HTTP\/1\.1 503 /);
      expect(h.answer()).toMatch(/\r\nretry-after: 1\r\n/i);
      expect(h.answer()).toMatch(/\r\nconnection: close\r\n/i);
      expect(h.answer()).toContain('"code":"server_busy"');
    }

    // While it is full, a small signed webhook is refused the same way, and the gauge shows the held bytes.
    const busy = await postSigned(app.webhookUrl(), sampleTransferSucceeded(), TEST_SECRET);
    expect(busy.status).toBe(503);
    expect(busy.json.error.code).toBe('server_busy');
    expect(busy.headers['retry-after']).toBe('1');
    const scraped = await send(`${app.adminUrl}/metrics`);
    expect(metricValue(scraped.text, 'hookrelay_ingest_buffered_bytes')).toBe(BUDGET);

    for (const h of holders) h.socket.destroy();
    await eventually(() => app.bodyBudget.bufferedBytes === 0, 10_000, 'the budget to empty');
    expect(peak()).toBe(BUDGET);
    const accepted = await postSigned(app.webhookUrl(), sampleTransferSucceeded(), TEST_SECRET);
    expect(accepted.status).toBe(200);
    expect(metricValue((await send(`${app.adminUrl}/metrics`)).text, 'hookrelay_ingest_buffered_bytes')).toBe(0);
    expect(peak()).toBeLessThanOrEqual(BUDGET);
  });

  it('counts a chunked body as it arrives and refuses it at the chunk that would pass the budget, releasing what it had', async () => {
    const app = await receiver();
    const peak = watchPeak(app.bodyBudget);
    const holders = [holder(app.port, 48 * 1024), holder(app.port), holder(app.port), holder(app.port)];
    await eventually(() => app.bodyBudget.bufferedBytes === BUDGET - 16 * 1024, 10_000, 'all but 16 KiB held');

    // A signed body of nearly 64 KiB in 16 KiB chunks: the first chunk fits, the second would pass the budget.
    const raw = Buffer.from(JSON.stringify({ ...sampleTransferSucceeded(), padding: 'x'.repeat(MAX_BODY - 2048) }));
    const head = requestHead('POST', '/webhooks/checkout', [['Host', 'x'], ['Content-Type', 'application/json'], ['X-Service-Signature', signHmacSha256Hex(TEST_SECRET, raw)], ['Transfer-Encoding', 'chunked'], ['Connection', 'close']]);
    const refusedChunked = await rawRequest(app.port, [head, chunked(raw, [16 * 1024])], { timeoutMs: 10_000 });
    expect(refusedChunked.status).toBe(503);
    expect(JSON.parse(refusedChunked.body.toString()).error.code).toBe('server_busy');
    expect(app.bodyBudget.bufferedBytes).toBe(BUDGET - 16 * 1024);

    holders[0]!.socket.destroy();
    await eventually(() => app.bodyBudget.bufferedBytes === 3 * MAX_BODY, 10_000, 'the smaller holder gone');
    // With room again, the same chunked body is read and stored.
    const stored = await rawRequest(app.port, [head, chunked(raw, [16 * 1024])], { timeoutMs: 10_000 });
    expect(stored.status).toBe(200);
    for (const h of holders) h.socket.destroy();
    await eventually(() => app.bodyBudget.bufferedBytes === 0, 10_000, 'the budget to empty');
    expect(peak()).toBeLessThanOrEqual(BUDGET);
  });

  it('1 MiB uploads held on 64 connections: the budget bounds what is held, and after they go a GC returns it (figures reported)', async () => {
    const MiB = 1024 * 1024;
    const budget = 8 * MiB;
    const app = await startTestReceiver({ maxBody: MiB, delivery: { enabled: false }, retention: { enabled: false }, server: { maxBufferedBytes: budget } });
    running.push(app);
    const peak = watchPeak(app.bodyBudget);
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const mib = (): number => {
      gc();
      const { heapUsed, external } = process.memoryUsage();
      return Math.round(((heapUsed + external) / 1048576) * 10) / 10;
    };
    const before = mib();
    const holders = Array.from({ length: 64 }, () => holder(app.port, MiB));
    await eventually(() => holders.filter((h) => h.answer().includes('\r\n\r\n')).length === 56 && app.bodyBudget.bufferedBytes === budget, 20_000, 'eight uploads held, the rest refused');
    const holding = mib();
    for (const h of holders) h.socket.destroy();
    await eventually(() => app.bodyBudget.bufferedBytes === 0, 10_000, 'the budget to empty');
    const after = mib();
    expect(peak()).toBeLessThanOrEqual(budget);
    report('abuse/ingest-memory', { connections: 64, budgetMiB: 8, peakBufferedMiB: peak() / 1048576, heapPlusExternalMiB: `${before}/${holding}/${after} (before/holding/after GC)` });
  });

  it('caps open connections per listener: one more is closed unanswered, and accepted again once one goes', async () => {
    const app = await receiver({ maxConnections: 3 });
    // Three keep-alive connections, each answered once, so the server has surely counted them.
    const opened = await Promise.all(Array.from({ length: 3 }, () => openConnection(app.port)));
    const beyond = await rawRequest(app.port, requestHead('GET', '/healthz', [['Host', 'x'], ['Connection', 'close']]), { timeoutMs: 5_000 });
    expect(beyond.status).toBe(0);
    expect(beyond.closed).toBe(true);
    for (const socket of opened) socket.destroy();
    await eventually(async () => (await rawRequest(app.port, requestHead('GET', '/healthz', [['Host', 'x'], ['Connection', 'close']]), { timeoutMs: 5_000 })).status === 200, 10_000, 'a connection accepted again');
    expect(metricValue((await send(`${app.adminUrl}/metrics`)).text, 'hookrelay_connections_dropped_total')).toBeGreaterThanOrEqual(1);
  });
});

/** A connection that has had one answer and stays open (keep-alive), so the server counts it. */
function openConnection(port: number): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ port, host: '127.0.0.1' });
    socket.once('error', reject);
    socket.once('data', () => resolve(socket));
    socket.write(requestHead('GET', '/healthz', [['Host', 'x']]));
  });
}
