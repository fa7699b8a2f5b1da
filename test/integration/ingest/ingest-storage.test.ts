import Database from '../../../src/sqlite-driver.js';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { sampleTransferSucceeded } from '../../../src/samples/transfer-succeeded.js';
import { DATABASE_FILE } from '../../../src/store/sqlite/sqlite-store.js';
import { describeEachBackend } from '../../helpers/backends.js';
import { postSigned, send } from '../../helpers/http.js';
import { startTestReceiver, TEST_SECRET, type TestReceiver } from '../../helpers/receiver.js';
import { removeTempDirs } from '../../helpers/temp-dir.js';

const running: TestReceiver[] = [];
async function receiverWith(overrides: Parameters<typeof startTestReceiver>[0] = {}): Promise<TestReceiver> {
  const receiver = await startTestReceiver(overrides);
  running.push(receiver);
  return receiver;
}
afterEach(async () => {
  await Promise.all(running.splice(0).map((r) => r.close()));
});
afterAll(() => removeTempDirs());

describeEachBackend('storage', (backend) => {
  const receiverOn = async (): Promise<TestReceiver> => receiverWith(await backend.storage());

  it('keeps the raw body byte-exact, odd whitespace, key order and unicode included', async () => {
    const receiver = await receiverOn();
    const body = sampleTransferSucceeded();
    const raw = Buffer.from(`{ "event":"transfer:succeeded",\n\t"result" : ${JSON.stringify({ ...body.result, note: 'café ☕ \u2028 \ud83d\ude80', big: 12345678901234567890 }, null, 3)} }  `);
    const reply = await postSigned(receiver.webhookUrl(), raw, TEST_SECRET);
    expect(reply.status).toBe(200);
    const stored = await receiver.store.getEvent(reply.json.id);
    expect(stored!.body.equals(raw)).toBe(true);
  });

  it('keeps received headers but never credentials', async () => {
    const receiver = await receiverOn();
    const reply = await postSigned(receiver.webhookUrl(), sampleTransferSucceeded(), TEST_SECRET, { headers: { authorization: 'Bearer hunter2', cookie: 'sid=1', 'x-trace': 'abc' } });
    const stored = await receiver.store.getEvent(reply.json.id);
    expect(stored!.headers).toMatchObject({ 'x-trace': 'abc', 'content-type': 'application/json', 'x-service-signature': expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(stored!.headers).not.toHaveProperty('authorization');
    expect(stored!.headers).not.toHaveProperty('cookie');
  });

  it('acknowledges a repeat of the same transfer as a duplicate and stores it once', async () => {
    const receiver = await receiverOn();
    const body = sampleTransferSucceeded();
    const first = await postSigned(receiver.webhookUrl(), body, TEST_SECRET);
    const second = await postSigned(receiver.webhookUrl(), body, TEST_SECRET);
    expect(first.json).toEqual({ id: first.json.id, duplicate: false, receivedCount: 1 });
    expect(second.status).toBe(200);
    expect(second.json).toEqual({ id: first.json.id, duplicate: true, receivedCount: 2 });
    const page = await receiver.store.listEvents({ transferId: body.result.id }, { limit: 10 });
    expect(page.items).toHaveLength(1);
    expect(page.items[0]!.receivedCount).toBe(2);
  });

  it('keeps a transfer id with a lone surrogate apart from its U+FFFD look-alike: stored, then a duplicate; the other stored', async () => {
    const receiver = await receiverOn();
    // JSON escapes, as a sender writes them: the bytes on the wire are ASCII.
    const body = (id: string): Buffer => Buffer.from(`{"event":"x:sur","result":{"id":"${id}"}}`);
    const surrogate = await postSigned(receiver.webhookUrl(), body('T-\\ud800'), TEST_SECRET);
    expect([surrogate.status, surrogate.json]).toEqual([200, { id: expect.any(Number), duplicate: false, receivedCount: 1 }]);
    const again = await postSigned(receiver.webhookUrl(), body('T-\\ud800'), TEST_SECRET);
    expect([again.status, again.json]).toEqual([200, { id: surrogate.json.id, duplicate: true, receivedCount: 2 }]);
    const lookAlike = await postSigned(receiver.webhookUrl(), body('T-\\ufffd'), TEST_SECRET);
    expect([lookAlike.status, lookAlike.json]).toEqual([200, { id: expect.any(Number), duplicate: false, receivedCount: 1 }]);
    expect(lookAlike.json.id).not.toBe(surrogate.json.id);
    expect(await receiver.store.getEvent(surrogate.json.id)).toMatchObject({ transferId: 'T-\ud800', receivedCount: 2 });
    expect(await receiver.store.getEvent(lookAlike.json.id)).toMatchObject({ transferId: 'T-\ufffd', receivedCount: 1 });
  });

  it('stores exactly one row for 25 concurrent identical deliveries', async () => {
    const receiver = await receiverOn();
    const body = sampleTransferSucceeded();
    const replies = await Promise.all(Array.from({ length: 25 }, () => postSigned(receiver.webhookUrl(), body, TEST_SECRET)));
    expect(replies.every((r) => r.status === 200)).toBe(true);
    expect(replies.filter((r) => r.json.duplicate === false)).toHaveLength(1);
    expect(new Set(replies.map((r) => r.json.id)).size).toBe(1);
    const page = await receiver.store.listEvents({}, { limit: 100 });
    expect(page.items).toHaveLength(1);
    expect(page.items[0]!.receivedCount).toBe(25);
  });

  it('treats the same result id under another event name as another event', async () => {
    const receiver = await receiverOn();
    const a = await postSigned(receiver.webhookUrl(), { event: 'x:one', result: { id: 'same' } }, TEST_SECRET);
    const b = await postSigned(receiver.webhookUrl(), { event: 'x:two', result: { id: 'same' } }, TEST_SECRET);
    expect(a.json.duplicate).toBe(false);
    expect(b.json.duplicate).toBe(false);
    expect(a.json.id).not.toBe(b.json.id);
  });

  it('stores many concurrent distinct events, each acknowledged with its own id', async () => {
    const receiver = await receiverOn();
    const replies = await Promise.all(Array.from({ length: 200 }, () => postSigned(receiver.webhookUrl(), sampleTransferSucceeded(), TEST_SECRET)));
    expect(replies.every((r) => r.status === 200 && r.json.duplicate === false)).toBe(true);
    expect(new Set(replies.map((r) => r.json.id)).size).toBe(200);
    expect((await receiver.store.listEvents({}, { limit: 500 })).items).toHaveLength(200);
  });
});

describe('signature schemes', () => {
  it('accepts every configured secret during rotation and refuses a retired one', async () => {
    const sources = [{ name: 'checkout', secrets: ['new-secret', 'old-secret'] }];
    const receiver = await receiverWith({ sources });
    expect((await postSigned(receiver.webhookUrl(), sampleTransferSucceeded(), 'new-secret')).status).toBe(200);
    expect((await postSigned(receiver.webhookUrl(), sampleTransferSucceeded(), 'old-secret')).status).toBe(200);
    await receiver.close();
    const rotated = await receiverWith({ sources: [{ name: 'checkout', secrets: ['new-secret'] }], dataDir: receiver.dataDir });
    expect((await postSigned(rotated.webhookUrl(), sampleTransferSucceeded(), 'old-secret')).status).toBe(401);
    expect((await postSigned(rotated.webhookUrl(), sampleTransferSucceeded(), 'new-secret')).status).toBe(200);
  });

  it('verifies standard-webhooks signatures, with several entries in one header, and refuses stale timestamps', async () => {
    const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    const receiver = await receiverWith({ sources: [{ name: 'std', scheme: 'standard-webhooks', secrets: [secret] }] });
    const raw = Buffer.from(JSON.stringify(sampleTransferSucceeded()));
    const now = new Date();
    const signature = new Webhook(secret).sign('msg_1', now, raw);
    const headers = (sig: string, ts = now) => ({ 'content-type': 'application/json', 'webhook-id': 'msg_1', 'webhook-timestamp': String(Math.floor(ts.getTime() / 1000)), 'webhook-signature': sig });

    const many = await send(receiver.webhookUrl('std'), { method: 'POST', body: raw, headers: headers(`v1,Zm9vYmFy ${signature} v2,ignored`) });
    expect(many.status).toBe(200);

    const stale = new Date(now.getTime() - 6 * 60_000);
    const old = await send(receiver.webhookUrl('std'), { method: 'POST', body: raw, headers: headers(new Webhook(secret).sign('msg_1', stale, raw), stale) });
    expect(old.status).toBe(401);
    expect(old.json.error.code).toBe('invalid_signature');

    const missing = await send(receiver.webhookUrl('std'), { method: 'POST', body: raw, headers: { 'content-type': 'application/json' } });
    expect(missing.status).toBe(401);
    expect(missing.json.error).toMatchObject({ code: 'missing_signature', details: { headers: ['webhook-id', 'webhook-timestamp', 'webhook-signature'] } });

    const wrong = await send(receiver.webhookUrl('std'), { method: 'POST', body: raw, headers: headers('v1,Zm9vYmFy') });
    expect(wrong.status).toBe(401);
  });

  it('accepts unsigned posts only on a source explicitly set to none, and warns loudly at start', async () => {
    const receiver = await receiverWith({ sources: [{ name: 'checkout' }, { name: 'open', scheme: 'none' }] });
    const reply = await send(receiver.webhookUrl('open'), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(sampleTransferSucceeded()) });
    expect(reply.status).toBe(200);
    const unsignedOnDefault = await send(receiver.webhookUrl('checkout'), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(sampleTransferSucceeded()) });
    expect(unsignedOnDefault.status).toBe(401);
    expect(receiver.logLines().some((l) => l.level === 40 && String(l.msg).includes('SIGNATURE CHECKS ARE OFF') && l.source === 'open')).toBe(true);
  });
});

describe('store faults', () => {
  it('answers 503 while another process holds the write lock, stores nothing, and recovers by itself', async () => {
    const receiver = await receiverWith();
    const other = new Database(join(receiver.dataDir, DATABASE_FILE));
    other.exec('BEGIN IMMEDIATE');
    try {
      const locked = await postSigned(receiver.webhookUrl(), sampleTransferSucceeded(), TEST_SECRET);
      expect(locked.status).toBe(503);
      expect(locked.json.error.code).toBe('store_unavailable');
      const ready = await send(`${receiver.url}/readyz`);
      expect(ready.status).toBe(503);
    } finally {
      other.exec('ROLLBACK');
      other.close();
    }
    expect((await receiver.store.listEvents({}, { limit: 10 })).items).toHaveLength(0);
    expect((await postSigned(receiver.webhookUrl(), sampleTransferSucceeded(), TEST_SECRET)).status).toBe(200);
    expect((await send(`${receiver.url}/readyz`)).status).toBe(200);
  });
});

describe('request logs', () => {
  it('writes one line per request with request id, source, status and duration, and never the secret or signature', async () => {
    const receiver = await receiverWith();
    const ok = await postSigned(receiver.webhookUrl(), sampleTransferSucceeded(), TEST_SECRET, { headers: { 'x-request-id': 'req-123' } });
    await postSigned(receiver.webhookUrl(), sampleTransferSucceeded(), 'wrong-secret');
    expect(ok.headers['x-request-id']).toBe('req-123');
    const ingestLines = receiver.logLines().filter((l) => l.msg === 'ingest');
    expect(ingestLines).toHaveLength(2);
    expect(ingestLines[0]).toMatchObject({ reqId: 'req-123', source: 'checkout', status: 200, durationMs: expect.any(Number) });
    expect(ingestLines[1]).toMatchObject({ status: 401, code: 'invalid_signature' });
    expect(receiver.logText()).not.toContain(TEST_SECRET);
    const stored = await receiver.store.getEvent(ok.json.id);
    expect(receiver.logText()).not.toContain(stored!.headers['x-service-signature']);
  });

  it('with logRequests: errors, writes the lines of answers of 400 and above only', async () => {
    const receiver = await receiverWith({ logRequests: 'errors' });
    const ok = await postSigned(receiver.webhookUrl(), sampleTransferSucceeded(), TEST_SECRET);
    await postSigned(receiver.webhookUrl(), sampleTransferSucceeded(), 'wrong-secret');
    expect((await send(`${receiver.url}/healthz`)).status).toBe(200);
    expect((await send(`${receiver.url}/no-such-page`)).status).toBe(404);
    expect(ok.status).toBe(200);
    const lines = receiver.logLines();
    expect(lines.filter((l) => l.msg === 'ingest').map((l) => l.status)).toEqual([401]);
    expect(lines.filter((l) => l.msg === 'request').map((l) => [l.path, l.status])).toEqual([['/no-such-page', 404]]);
  });
});
