import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config.js';
import { DeliveryThread } from '../../../src/delivery/thread/delivery-thread.js';
import { createLogger } from '../../../src/log.js';
import { RuleSetWatcher } from '../../../src/rules/watcher.js';
import { openStore } from '../../../src/store/open-store.js';
import { sampleTransferSucceeded } from '../../../src/samples/transfer-succeeded.js';
import { describeEachBackend } from '../../helpers/backends.js';
import { postSigned, send } from '../../helpers/http.js';
import { parseSamples, sampleValue } from '../metrics/prometheus-text.js';
import { startTestReceiver, TEST_SECRET } from '../../helpers/receiver.js';
import { eventually, rulesDirWith, TEST_DELIVERY } from '../../helpers/rules.js';
import { makeTempDir, removeTempDirs } from '../../helpers/temp-dir.js';
import { startWebhookSink, type WebhookSink } from '../../helpers/webhook-sink.js';
import { Writable } from 'node:stream';

const running: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((r) => r.close()));
});
afterAll(() => removeTempDirs());

async function sinkReplying(reply: Parameters<typeof startWebhookSink>[0]): Promise<WebhookSink> {
  const sink = await startWebhookSink(reply);
  running.push(sink);
  return sink;
}

const destinations = (app: { adminUrl: string; adminToken: string }) => send(`${app.adminUrl}/admin/api/destinations`, { headers: { authorization: `Bearer ${app.adminToken}` } });
const readiness = (app: { adminUrl: string; adminToken: string }) => send(`${app.adminUrl}/admin/api/readiness`, { headers: { authorization: `Bearer ${app.adminToken}` } });

const forwardTo = (url: string): string => `id: fwd\non: [transfer:succeeded]\nto:\n  url: ${url}\nretry:\n  schedule: [0s]\n`;

describeEachBackend('the delivery loop in its own thread', (backend) => {
  it('delivers, and its attempts reach the metrics, the destinations view and the log of the receiver', async () => {
    const sink = await sinkReplying((_i, request) => (request.rawBody.includes('refuse@example.com') ? 400 : 200));
    const app = await startTestReceiver({
      ...(await backend.storage()),
      rulesDir: rulesDirWith({ 'fwd.yaml': forwardTo(sink.url) }),
      delivery: { ...TEST_DELIVERY, thread: true },
    });
    running.unshift(app);
    expect(app.outages).toBeNull(); // it runs in the thread

    const body = sampleTransferSucceeded({ email: 'a@example.com' });
    const stored = await postSigned(app.webhookUrl(), body, TEST_SECRET);
    expect(stored.status).toBe(200);
    const [received] = await sink.waitFor(1);
    expect(received!.rawBody.toString()).toBe(JSON.stringify(body));
    await eventually(async () => (await app.store.listDeliveries({ state: 'delivered' }, { limit: 5 })).items.length === 1, 10_000, 'the attempt recorded');

    // A refused delivery is dead-lettered; its warning is written by the thread's logger into the receiver's log.
    await postSigned(app.webhookUrl(), sampleTransferSucceeded({ email: 'refuse@example.com' }), TEST_SECRET);
    const warning = await eventually(() => app.logLines().find((line) => line.msg === 'delivery attempt' && line.outcome === 'dead'), 10_000, 'the dead attempt logged');
    expect(warning).toMatchObject({ level: 40, thread: 'delivery', ruleId: 'fwd', status: 400 });

    const samples = await eventually(async () => {
      const scraped = parseSamples(await app.metrics!.scrape());
      return sampleValue(scraped, 'hookrelay_delivery_attempts_total', { rule: 'fwd', outcome: 'dead' }) === 1 ? scraped : null;
    }, 10_000, 'the metric');
    expect(sampleValue(samples, 'hookrelay_delivery_attempts_total', { rule: 'fwd', outcome: 'delivered' })).toBe(1);
    expect(sampleValue(samples, 'hookrelay_delivery_thread_restarts_total')).toBe(0);
    const origin = new URL(sink.url).origin;
    expect(sampleValue(samples, 'hookrelay_destination_in_flight', { destination: origin })).toBe(0);
    const view = await destinations(app);
    expect(view.json).toMatchObject({ adaptive: true, destinations: [{ destination: origin, inFlight: 0, pausedUntil: null }] });
    expect(app.delivery!.activeAttempts).toBe(0);
    expect((await readiness(app)).json).toMatchObject({ status: 'ready', checks: { delivery: 'thread' } });
  });

  it('is not started while there is nothing to deliver, and starts at the first delivery a commit leaves', async () => {
    const sink = await sinkReplying(() => 200);
    const app = await startTestReceiver({
      ...(await backend.storage()),
      rulesDir: rulesDirWith({ 'fwd.yaml': forwardTo(sink.url).replace('on: [transfer:succeeded]', 'on: [transfer:succeeded]\nwhere: { result.email: forward@example.com }') }),
      delivery: { ...TEST_DELIVERY, thread: true },
    });
    running.unshift(app);
    // A webhook no rule forwards leaves nothing to deliver: many poll intervals later, still no thread.
    expect((await postSigned(app.webhookUrl(), sampleTransferSucceeded({ email: 'keep@example.com' }), TEST_SECRET)).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 20 * TEST_DELIVERY.pollIntervalMs));
    expect(app.delivery!.state).toBe('idle');
    expect((await readiness(app)).json).toMatchObject({ status: 'ready', checks: { delivery: 'idle' } });
    expect((await destinations(app)).json).toEqual({ adaptive: true, destinations: [] });

    await postSigned(app.webhookUrl(), sampleTransferSucceeded({ email: 'forward@example.com' }), TEST_SECRET);
    const [received] = await sink.waitFor(1);
    expect(JSON.parse(received!.rawBody.toString()).result.email).toBe('forward@example.com');
    expect(app.delivery!.state).toBe('thread');
    expect(sink.received).toHaveLength(1);
  });

  it('starts with the node when deliveries are pending from before', async () => {
    const sink = await sinkReplying(() => 200);
    const storage = { ...(await backend.storage()), dataDir: makeTempDir(), rulesDir: rulesDirWith({ 'fwd.yaml': forwardTo(sink.url) }) };
    // A receiver-only node plans the delivery and sends nothing.
    const receiver = await startTestReceiver({ ...storage, role: 'receiver' });
    await postSigned(receiver.webhookUrl(), sampleTransferSucceeded(), TEST_SECRET);
    await receiver.close();
    expect(sink.received).toHaveLength(0);

    const app = await startTestReceiver({ ...storage, delivery: { ...TEST_DELIVERY, thread: true } });
    running.unshift(app);
    expect(app.delivery!.state).toBe('thread');
    await sink.waitFor(1);
  });

  it('starts with the node when an outage is open, whose dead letters wait for a redrive', async () => {
    const storage = { ...(await backend.storage()), dataDir: makeTempDir() };
    const store = await openStore(loadConfig({}, storage), createLogger('silent'));
    try {
      await store.openOutage('http://127.0.0.1:9', Date.now());
    } finally {
      await store.close();
    }
    const app = await startTestReceiver({ ...storage, delivery: { ...TEST_DELIVERY, thread: true } });
    running.unshift(app);
    expect(app.delivery!.state).toBe('thread');
  });

  it('starts when another process leaves a delivery pending, which wakes no one here', async () => {
    const sink = await sinkReplying(() => 200);
    const storage = { ...(await backend.storage()), dataDir: makeTempDir() };
    const app = await startTestReceiver({ ...storage, rulesDir: rulesDirWith({ 'fwd.yaml': forwardTo(sink.url) }), delivery: { ...TEST_DELIVERY, thread: true } });
    running.unshift(app);
    expect(app.delivery!.state).toBe('idle');
    // Another store on the same data: its commit notifies its own listeners, not this node's.
    const other = await openStore(loadConfig({}, storage), createLogger('silent'));
    try {
      const body = sampleTransferSucceeded();
      const hash = app.rules.current().hash;
      await other.saveEvent({
        source: 'checkout', event: 'transfer:succeeded', transferId: body.result.id, checkoutId: null, email: null, walletAddress: null,
        validation: 'valid', receivedAt: Date.now(), headers: {}, body: Buffer.from(JSON.stringify(body)), ruleSetHash: hash,
        deliveries: [{ ruleId: 'fwd', ruleSetHash: hash, body: null, contentType: 'application/json' }],
      });
    } finally {
      await other.close();
    }
    await sink.waitFor(1);
    expect(app.delivery!.state).toBe('thread');
  });

  it("tells the receiver when a destination's circuit opens, which sends the alert", async () => {
    const destination = await sinkReplying(() => 503);
    const channel = await sinkReplying(() => 200);
    const app = await startTestReceiver({
      ...(await backend.storage()),
      rulesDir: rulesDirWith({ 'fwd.yaml': forwardTo(destination.url) }),
      delivery: { ...TEST_DELIVERY, thread: true, failureThreshold: 2, coolDownMs: 60_000 },
      alerts: { url: `${channel.url}/alerts`, secret: 'alert-secret', dampingMs: 60_000, deadLetterThreshold: 1000, checkIntervalMs: 100 },
    });
    running.unshift(app);
    for (const email of ['a@example.com', 'b@example.com']) await postSigned(app.webhookUrl(), sampleTransferSucceeded({ email }), TEST_SECRET);
    const [alert] = await channel.waitFor(1, 15_000);
    expect(JSON.parse(alert!.rawBody.toString()).text).toContain(`destination ${new URL(destination.url).origin} is failing`);
    const view = await destinations(app);
    expect((view.json.destinations as { pausedUntil: string | null }[])[0]!.pausedUntil).not.toBeNull();
  });

  it('lets an attempt in flight finish within the shutdown grace and records it before the store closes', async () => {
    const sink = await sinkReplying(() => ({ status: 200, delayMs: 400 }));
    const storage = await backend.storage();
    const app = await startTestReceiver({
      ...storage,
      rulesDir: rulesDirWith({ 'fwd.yaml': forwardTo(sink.url) }),
      delivery: { ...TEST_DELIVERY, thread: true },
      server: { shutdownGraceMs: 5_000 },
    });
    await postSigned(app.webhookUrl(), sampleTransferSucceeded(), TEST_SECRET);
    await sink.waitFor(1);
    await app.close();
    const config = loadConfig({}, { dataDir: app.dataDir, ...storage });
    const store = await openStore(config, createLogger('silent'));
    try {
      const { items } = await store.listDeliveries({}, { limit: 5 });
      expect(items.map((d) => d.state)).toEqual(['delivered']);
    } finally {
      await store.close();
    }
  });
});

/** The receiver's side of the rules, on an empty rule directory. */
async function noRules(): Promise<RuleSetWatcher> {
  const watcher = await RuleSetWatcher.start({ dir: makeTempDir(), env: {}, logger: createLogger('silent') });
  running.push({ close: async () => watcher.close() });
  return watcher;
}

describe('the delivery thread', () => {
  it('refuses an injected DNS lookup, which only the worker on the event loop can use', async () => {
    await expect(startTestReceiver({ delivery: { thread: true } }, { lookup: async () => [{ address: '127.0.0.1', family: 4 }] })).rejects.toThrow(/delivery\.thread to false/);
  });

  it('fails to start with the reason the thread gave', async () => {
    const config = loadConfig({}, { dataDir: makeTempDir() });
    const entry = new URL('../../fixtures/failing-delivery-thread.mjs', import.meta.url);
    await expect(new DeliveryThread({ config, env: {}, rules: await noRules(), logger: createLogger('silent'), entry }).start()).rejects.toThrow('the delivery thread could not start: the store could not be opened');
  });

  it('is started again when it dies, and says so in the log', async () => {
    const lines: string[] = [];
    const logger = createLogger('info', new Writable({ write(chunk, _enc, done) { lines.push(String(chunk)); done(); } }));
    const config = loadConfig({}, { dataDir: makeTempDir() });
    let restarts = 0;
    const thread = new DeliveryThread({ config, env: {}, rules: await noRules(), logger, onRestart: () => (restarts += 1), entry: new URL('../../fixtures/dying-delivery-thread.mjs', import.meta.url) });
    await thread.start();
    running.push({ close: () => thread.stop(0) });
    expect(thread.state).toBe('thread');
    await eventually(() => thread.state === 'restarting', 5_000, 'the thread dead');
    await eventually(() => lines.filter((line) => line.includes('the delivery thread stopped unexpectedly')).length >= 2, 10_000, 'two restarts');
    expect(restarts).toBeGreaterThanOrEqual(2);
    expect(lines.some((line) => line.includes('the delivery thread died on purpose'))).toBe(true);
  });
});
