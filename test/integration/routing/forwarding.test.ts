import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { sampleTransferSucceeded } from '../../../src/samples/transfer-succeeded.js';
import { signHmacSha256Hex } from '../../../src/signing/hmac-sha256-hex.js';
import { describeEachBackend, type ConfigOverrides, type TestBackend } from '../../helpers/backends.js';
import { postSigned } from '../../helpers/http.js';
import { startTestReceiver, TEST_SECRET, type TestReceiver } from '../../helpers/receiver.js';
import { eventually, rulesDirWith, TEST_DELIVERY } from '../../helpers/rules.js';
import { removeTempDirs } from '../../helpers/temp-dir.js';
import { startWebhookSink, type SinkReply, type WebhookSink } from '../../helpers/webhook-sink.js';

const running: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((r) => r.close()));
});
afterAll(() => removeTempDirs());

async function sink(reply?: (index: number) => SinkReply): Promise<WebhookSink> {
  const s = await startWebhookSink(reply);
  running.push(s);
  return s;
}

async function receiver(rules: Record<string, string>, delivery: Record<string, unknown> = {}, logLevel = 'info', storage: ConfigOverrides = {}): Promise<TestReceiver> {
  const r = await startTestReceiver({ ...storage, rulesDir: rulesDirWith(rules), delivery: { ...TEST_DELIVERY, ...delivery }, logLevel });
  running.unshift(r); // closed before the sinks
  return r;
}

/** `receiver` on a backend's fresh storage. */
function receiverOn(backend: TestBackend): typeof receiver {
  return async (rules, delivery = {}, logLevel = 'info') => receiver(rules, delivery, logLevel, await backend.storage());
}

const attemptLines = (app: TestReceiver): Record<string, unknown>[] => app.logLines().filter((l) => l.msg === 'delivery attempt');

const rule = (id: string, url: string, extra = ''): string => `id: ${id}\non: [transfer:succeeded]\nto:\n  url: ${url}\n${extra}`;

describeEachBackend('forwarding through rules', (backend) => {
  const receiver = receiverOn(backend);

  it('forwards the original bytes untouched with a stable delivery id, and records the delivered attempt', async () => {
    const target = await sink();
    const app = await receiver({ 'all.yaml': rule('all', target.url) });
    const raw = Buffer.from(`{"event":"transfer:succeeded", "result": ${JSON.stringify(sampleTransferSucceeded().result)}}`);
    const reply = await postSigned(app.webhookUrl(), raw, TEST_SECRET);
    expect(reply.status).toBe(200);
    const [got] = await target.waitFor(1);
    expect(got!.rawBody.equals(raw)).toBe(true);
    expect(got!.headers['content-type']).toBe('application/json');
    expect(got!.headers['x-hookrelay-delivery']).toMatch(/^dlv_\d+$/);
    expect(got!.headers['webhook-id']).toBe(got!.headers['x-hookrelay-delivery']);
    expect(got!.headers['x-hookrelay-event-id']).toBe(String(reply.json.id));
    expect(got!.headers['x-hookrelay-rule']).toBe('all');
    expect(Math.abs(Number(got!.headers['x-hookrelay-timestamp']) - Date.now() / 1000)).toBeLessThan(60);
    // Received headers stay behind unless the rule forwards them.
    expect(got!.headers['x-service-signature']).toBeUndefined();
    const page = await eventually(async () => {
      const p = await app.store.listDeliveries({ eventId: reply.json.id }, { limit: 10 });
      return p.items[0]?.state === 'delivered' ? p : null;
    });
    const detail = await app.store.getDelivery(page.items[0]!.id);
    expect(detail).toMatchObject({ ruleId: 'all', ruleSetHash: app.rules.current().hash, state: 'delivered', attempts: 1, lastStatus: 200 });
    expect(detail!.attemptLog).toEqual([expect.objectContaining({ attempt: 1, status: 200, outcome: 'delivered', urlOrigin: new URL(target.url).origin })]);
  });

  it('sends the transformed body when the rule has a transform', async () => {
    const target = await sink();
    const app = await receiver({ 't.yaml': rule('t', target.url, 'transform: |\n  { "email": result.email, "tokens": result.claimedTokens.tokenIds }\n') });
    const body = sampleTransferSucceeded({ email: 'ada@example.com', quantity: 2 });
    await postSigned(app.webhookUrl(), body, TEST_SECRET);
    const [got] = await target.waitFor(1);
    expect(JSON.parse(got!.rawBody.toString())).toEqual({ email: 'ada@example.com', tokens: (body.result.claimedTokens as { tokenIds: string[] }).tokenIds });
  });

  it('only forwards events the filter matches, and a duplicate delivery of an event never forwards twice', async () => {
    const target = await sink();
    const app = await receiver({ 'big.yaml': rule('big', target.url, 'where:\n  result.paymentMethod: BUY_WITH_CARD\n  result.totalPriceUsd: { $gte: 100 }\n') });
    const small = sampleTransferSucceeded({ unitPriceUsd: 10, quantity: 1 });
    const crypto = sampleTransferSucceeded({ unitPriceUsd: 500, paymentMethod: 'BUY_WITH_CRYPTO' });
    const big = sampleTransferSucceeded({ unitPriceUsd: 500 });
    for (const body of [small, crypto, big, big]) expect((await postSigned(app.webhookUrl(), body, TEST_SECRET)).status).toBe(200);
    await target.waitFor(1);
    await new Promise((r) => setTimeout(r, 300));
    expect(target.received).toHaveLength(1);
    expect(JSON.parse(target.received[0]!.rawBody.toString()).result.id).toBe(big.result.id);
    expect((await app.store.listDeliveries({}, { limit: 10 })).items).toHaveLength(1);
  });

  it('signs with standard-webhooks so any Standard Webhooks consumer can verify', async () => {
    const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    const target = await sink();
    const app = await receiver({ 's.yaml': rule('s', target.url, `sign: { scheme: standard-webhooks, secret: "${secret}" }\n`) });
    await postSigned(app.webhookUrl(), sampleTransferSucceeded(), TEST_SECRET);
    const [got] = await target.waitFor(1);
    const headers = Object.fromEntries(Object.entries(got!.headers).map(([k, v]) => [k, String(v)]));
    expect(() => new Webhook(secret).verify(got!.rawBody.toString(), headers)).not.toThrow();
    expect(headers['webhook-id']).toBe(headers['x-hookrelay-delivery']);
  });

  it('signs with hmac-sha256-hex the way the checkout service does, using ${ENV} secrets and headers', async () => {
    const target = await sink();
    const rulesDir = rulesDirWith({ 'h.yaml': rule('h', target.url, '  headers: { Authorization: "Bearer ${FWD_TOKEN}" }\nsign: { scheme: hmac-sha256-hex, secret: "${FWD_SECRET}" }\n') });
    const app = await startTestReceiver({ rulesDir, delivery: TEST_DELIVERY }, { env: { FWD_TOKEN: 't0k3n', FWD_SECRET: 'fwd-secret' } });
    running.unshift(app);
    await postSigned(app.webhookUrl(), sampleTransferSucceeded(), TEST_SECRET);
    const [got] = await target.waitFor(1);
    expect(got!.headers['x-service-signature']).toBe(signHmacSha256Hex('fwd-secret', got!.rawBody));
    expect(got!.headers.authorization).toBe('Bearer t0k3n');
    expect(app.logText()).not.toContain('t0k3n');
    expect(app.logText()).not.toContain('fwd-secret');
  });
});

describe('forwarding received headers (to.forwardHeaders)', () => {
  it('passes the checkout\'s own signature through with the untouched bytes, so the destination verifies it with the checkout secret', async () => {
    const target = await sink();
    const app = await receiver({ 'f.yaml': rule('f', target.url, '  forwardHeaders: [X-Service-Signature, x-trace, x-absent]\n') });
    const raw = Buffer.from(`{"event":"transfer:succeeded",  "result": ${JSON.stringify(sampleTransferSucceeded().result)}}`);
    const reply = await postSigned(app.webhookUrl(), raw, TEST_SECRET, { headers: { 'x-trace': 'abc', 'x-other': 'kept back' } });
    expect(reply.status).toBe(200);
    const [got] = await target.waitFor(1);
    expect(got!.rawBody.equals(raw)).toBe(true);
    expect(got!.headers['x-service-signature']).toBe(signHmacSha256Hex(TEST_SECRET, raw));
    expect(got!.headers['x-trace']).toBe('abc');
    expect(got!.headers['x-other']).toBeUndefined();
    expect(got!.headers['x-absent']).toBeUndefined();
    expect(got!.headers['x-hookrelay-delivery']).toMatch(/^dlv_\d+$/);
  });

  it('hookrelay\'s own signature wins over a forwarded header of the same name', async () => {
    const target = await sink();
    const app = await receiver({ 'f.yaml': rule('f', target.url, '  forwardHeaders: [x-service-signature]\nsign: { scheme: hmac-sha256-hex, secret: rule-secret }\n') });
    await postSigned(app.webhookUrl(), sampleTransferSucceeded(), TEST_SECRET);
    const [got] = await target.waitFor(1);
    expect(got!.headers['x-service-signature']).toBe(signHmacSha256Hex('rule-secret', got!.rawBody));
  });
});

describeEachBackend('retries and dead letters', (backend) => {
  const receiver = receiverOn(backend);

  it('retries after a 500 and delivers, with the same delivery id on both attempts', async () => {
    const target = await sink((i) => (i === 0 ? 500 : 200));
    const app = await receiver({ 'r.yaml': rule('r', target.url, 'retry: { schedule: [0s, 100ms, 100ms] }\n') });
    await postSigned(app.webhookUrl(), sampleTransferSucceeded(), TEST_SECRET);
    const received = await target.waitFor(2);
    expect(received[0]!.headers['webhook-id']).toBe(received[1]!.headers['webhook-id']);
    const delivery = await eventually(async () => {
      const d = (await app.store.listDeliveries({}, { limit: 1 })).items[0];
      return d?.state === 'delivered' ? d : null;
    });
    const detail = await app.store.getDelivery(delivery.id);
    expect(detail!.attemptLog.map((a) => [a.attempt, a.status, a.outcome])).toEqual([[1, 500, 'pending'], [2, 200, 'delivered']]);
    // The failed attempt is logged at info; the success only at debug (it is in the attempt log above).
    expect(attemptLines(app)).toEqual([expect.objectContaining({ level: 30, deliveryId: delivery.id, attempt: 1, status: 500, outcome: 'pending', nextAttemptAt: expect.any(String) })]);
  });

  it('logs successful attempts too when the log level is debug', async () => {
    const target = await sink();
    const app = await receiver({ 'r.yaml': rule('r', target.url) }, {}, 'debug');
    await postSigned(app.webhookUrl(), sampleTransferSucceeded(), TEST_SECRET);
    await target.waitFor(1);
    const line = await eventually(async () => attemptLines(app)[0]);
    expect(line).toMatchObject({ level: 20, ruleId: 'r', attempt: 1, status: 200, outcome: 'delivered', destination: new URL(target.url).origin });
  });

  it('honours Retry-After on a 429', async () => {
    const target = await sink((i) => (i === 0 ? { status: 429, headers: { 'retry-after': '1' } } : 200));
    const app = await receiver({ 'r.yaml': rule('r', target.url, 'retry: { schedule: [0s, 50ms, 50ms] }\n') });
    await postSigned(app.webhookUrl(), sampleTransferSucceeded(), TEST_SECRET);
    const [first, second] = await target.waitFor(2, 5000);
    expect(second!.receivedAt - first!.receivedAt).toBeGreaterThanOrEqual(950);
  });

  it('dead-letters a 4xx at once, keeping the response excerpt', async () => {
    const target = await sink(() => ({ status: 404, body: '{"error":"no such hook"}' }));
    const app = await receiver({ 'r.yaml': rule('r', target.url, 'retry: { schedule: [0s, 50ms, 50ms] }\n') });
    await postSigned(app.webhookUrl(), sampleTransferSucceeded(), TEST_SECRET);
    const dead = await eventually(async () => (await app.store.listDeliveries({ state: 'dead' }, { limit: 1 })).items[0]);
    const detail = await app.store.getDelivery(dead.id);
    expect(target.received).toHaveLength(1);
    expect(detail!.attemptLog).toEqual([expect.objectContaining({ status: 404, outcome: 'dead', responseExcerpt: '{"error":"no such hook"}' })]);
    expect(attemptLines(app)).toEqual([expect.objectContaining({ level: 40, deliveryId: dead.id, status: 404, outcome: 'dead' })]);
  });

  it('gives up on a hanging destination after the rule timeout and dead-letters when the schedule is exhausted', async () => {
    const target = await sink(() => 'hang');
    const app = await receiver({ 'r.yaml': rule('r', target.url, 'timeout: 300ms\nretry: { schedule: [0s, 50ms] }\n') });
    await postSigned(app.webhookUrl(), sampleTransferSucceeded(), TEST_SECRET);
    const dead = await eventually(async () => (await app.store.listDeliveries({ state: 'dead' }, { limit: 1 })).items[0], 5000);
    const detail = await app.store.getDelivery(dead.id);
    expect(detail!.attemptLog.map((a) => [a.errorCode, a.outcome])).toEqual([['timeout', 'pending'], ['timeout', 'dead']]);
    expect(detail!.attemptLog.every((a) => a.durationMs >= 250 && a.durationMs < 2000)).toBe(true);
    expect(detail!.deadReason).toMatch(/retries exhausted/);
  });

  it('dead-letters a delivery whose transform fails at delivery instead of dropping it', async () => {
    const target = await sink();
    const app = await receiver({ 'bad.yaml': rule('bad', target.url, 'transform: |\n  $error("boom")\n') });
    const reply = await postSigned(app.webhookUrl(), sampleTransferSucceeded(), TEST_SECRET);
    expect(reply.status).toBe(200);
    const delivery = await eventually(async () => (await app.store.listDeliveries({ eventId: reply.json.id, state: 'dead' }, { limit: 5 })).items[0]);
    expect(delivery).toMatchObject({ state: 'dead', deadReason: expect.stringMatching(/^transform failed at position \d+: D3137 boom$/) });
    expect(target.received).toHaveLength(0);
  });
});

describe('SSRF guard on rule destinations', () => {
  it('refuses a loopback destination that is not allowlisted, without connecting', async () => {
    const target = await sink();
    const app = await receiver({ 'r.yaml': rule('r', target.url) }, { allowNetworks: [] });
    await postSigned(app.webhookUrl(), sampleTransferSucceeded(), TEST_SECRET);
    const dead = await eventually(async () => (await app.store.listDeliveries({ state: 'dead' }, { limit: 1 })).items[0]);
    const detail = await app.store.getDelivery(dead.id);
    expect(detail!.attemptLog[0]).toMatchObject({ errorCode: 'destination_refused', outcome: 'dead' });
    expect(target.received).toHaveLength(0);
  });

  it('refuses a host name that resolves to loopback (checked after DNS, injected resolver)', async () => {
    const target = await sink();
    const port = new URL(target.url).port;
    const app = await startTestReceiver(
      { rulesDir: rulesDirWith({ 'r.yaml': rule('r', `http://hooks.example.test:${port}/hooks`) }), delivery: { ...TEST_DELIVERY, allowNetworks: [] } },
      { lookup: async () => [{ address: '127.0.0.1', family: 4 }] },
    );
    running.unshift(app);
    await postSigned(app.webhookUrl(), sampleTransferSucceeded(), TEST_SECRET);
    const dead = await eventually(async () => (await app.store.listDeliveries({ state: 'dead' }, { limit: 1 })).items[0]);
    expect((await app.store.getDelivery(dead.id))!.attemptLog[0]!.errorCode).toBe('destination_refused');
    expect(target.received).toHaveLength(0);
  });
});

describe('per-destination isolation', () => {
  it('keeps delivering to a healthy destination while another hangs', async () => {
    const slow = await sink(() => 'hang');
    const fast = await sink();
    const app = await receiver({
      'slow.yaml': rule('slow', slow.url, 'timeout: 5s\nconcurrency: 2\n'),
      'fast.yaml': rule('fast', fast.url),
    });
    await Promise.all(Array.from({ length: 20 }, () => postSigned(app.webhookUrl(), sampleTransferSucceeded(), TEST_SECRET)));
    await fast.waitFor(20, 5000);
    expect(slow.received.length).toBeLessThanOrEqual(2); // its concurrency limit holds the rest back
  });
});
