import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { sampleTransferSucceeded } from '../../../src/samples/transfer-succeeded.js';
import { postSigned, send } from '../../helpers/http.js';
import { startTestReceiver, TEST_SECRET, type TestReceiver } from '../../helpers/receiver.js';
import { eventually, rulesDirWith, TEST_DELIVERY } from '../../helpers/rules.js';
import { parseSamples, sampleValue } from '../metrics/prometheus-text.js';

/** A sink that answers 200 after `delayMs`, or 503 at once while `failing`. */
async function startSwitchableSink(delayMs: number): Promise<{ origin: string; url: string; received: () => number; fail(): void; close(): Promise<void> }> {
  let failing = false;
  let received = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      received += 1;
      if (failing) res.writeHead(503).end();
      else setTimeout(() => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'), delayMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    url: `${origin}/hooks`,
    received: () => received,
    fail: () => void (failing = true),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

interface DestinationsAnswer {
  adaptive: boolean;
  destinations: { destination: string; limit: number; ceiling: number; inFlight: number; pausedUntil: string | null }[];
}

async function destinations(app: TestReceiver): Promise<DestinationsAnswer> {
  const reply = await send(`${app.adminUrl}/admin/api/destinations`, { headers: { authorization: `Bearer ${app.adminToken}` } });
  expect(reply.status).toBe(200);
  return reply.json as DestinationsAnswer;
}

/** Posts `count` events, `parallel` at a time, so deliveries pile up and the sink sees attempts side by side. */
async function ingest(app: TestReceiver, count: number, parallel = 25): Promise<void> {
  for (let sent = 0; sent < count; sent += parallel) {
    const replies = await Promise.all(Array.from({ length: Math.min(parallel, count - sent) }, () => postSigned(app.webhookUrl(), sampleTransferSucceeded(), TEST_SECRET)));
    expect(replies.every((reply) => reply.status === 200)).toBe(true);
  }
}

let cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const step of cleanup.reverse()) await step();
  cleanup = [];
});

describe('adaptive concurrency per destination', () => {
  it('rises while the destination answers well, falls when it fails, before its circuit opens', async () => {
    const sink = await startSwitchableSink(30);
    cleanup.push(() => sink.close());
    const rulesDir = rulesDirWith({ 'forward.yaml': `id: forward\non: [transfer:succeeded]\nto:\n  url: ${sink.url}\nconcurrency: 40\nretry: { schedule: [0s, 0s, 0s, 0s, 0s, 0s, 0s, 0s] }\n` });
    const app = await startTestReceiver({ rulesDir, delivery: { ...TEST_DELIVERY, failureThreshold: 1000 } });
    cleanup.push(() => app.close());

    expect(await destinations(app)).toEqual({ adaptive: true, destinations: [] });

    await ingest(app, 400);
    const risen = await eventually(async () => {
      const view = (await destinations(app)).destinations.find((d) => d.destination === sink.origin);
      return view && view.limit > 20 ? view : null;
    }, 20_000, 'the limit to rise above its start (half the ceiling)');
    expect(risen.ceiling).toBe(40);
    await eventually(() => sink.received() >= 400, 20_000, 'every event to be delivered');
    const healthyLimit = (await destinations(app)).destinations[0]!.limit;

    sink.fail();
    await ingest(app, 100);
    const fallen = await eventually(async () => {
      const view = (await destinations(app)).destinations.find((d) => d.destination === sink.origin);
      return view && view.limit <= healthyLimit / 2 ? view : null;
    }, 20_000, 'the limit to fall to half or less');
    expect(fallen.limit).toBeGreaterThanOrEqual(1);
    expect(fallen.pausedUntil).toBeNull(); // backed off, not paused

    // /metrics shows the same limit (read from the thread at each scrape), labelled by the destination's
    // origin only. The retries still move it: compare at a moment when it held still from before the scrape
    // to after it.
    const snapshot = await eventually(async () => {
      const before = (await destinations(app)).destinations[0]!.limit;
      const metrics = await send(`${app.adminUrl}/metrics`);
      const after = (await destinations(app)).destinations[0]!.limit;
      const shown = sampleValue(parseSamples(metrics.text), 'hookrelay_destination_concurrency_limit', { destination: sink.origin });
      return before === after ? { limit: after, shown } : null;
    }, 20_000, 'a scrape while the limit holds still');
    expect(snapshot.shown).toBe(snapshot.limit);
  }, 60_000);

  it('delivery.adaptive: false pins the limit at the ceiling', async () => {
    const sink = await startSwitchableSink(0);
    cleanup.push(() => sink.close());
    sink.fail();
    const rulesDir = rulesDirWith({ 'forward.yaml': `id: forward\non: [transfer:succeeded]\nto:\n  url: ${sink.url}\nconcurrency: 10\nretry: { schedule: [0s, 0s] }\n` });
    const app = await startTestReceiver({ rulesDir, delivery: { ...TEST_DELIVERY, adaptive: false, failureThreshold: 1000 } });
    cleanup.push(() => app.close());
    await ingest(app, 30);
    await eventually(() => sink.received() >= 30, 20_000, 'every first attempt to fail');
    const settled = await eventually(async () => {
      const answer = await destinations(app);
      return answer.destinations[0]?.inFlight === 0 ? answer : null;
    }, 20_000, 'the attempts to end');
    expect(settled).toEqual({ adaptive: false, destinations: [{ destination: sink.origin, limit: 10, ceiling: 10, inFlight: 0, pausedUntil: null }] });
  }, 60_000);
});
