import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sampleTransferSucceeded } from '../../../src/samples/transfer-succeeded.js';
import { signHmacSha256Hex } from '../../../src/signing/hmac-sha256-hex.js';
import { postSigned, send } from '../../helpers/http.js';
import { startTestReceiver, TEST_SECRET, type TestReceiver } from '../../helpers/receiver.js';
import { removeTempDirs } from '../../helpers/temp-dir.js';

let receiver: TestReceiver;
beforeAll(async () => {
  receiver = await startTestReceiver({ maxBody: 4096 });
});
afterAll(async () => {
  await receiver.close();
  removeTempDirs();
});

async function storedCount(): Promise<number> {
  return (await receiver.store.listEvents({}, { limit: 1000 })).items.length;
}

function expectErrorBody(reply: { json: any }, code: string): void {
  expect(reply.json).toEqual({ error: { code, message: expect.any(String), details: expect.toSatisfy((d: unknown) => d !== undefined) } });
}

describe('POST /webhooks/:source statuses', () => {
  it('stores a valid signed transfer:succeeded and answers 200 with its id', async () => {
    const body = sampleTransferSucceeded();
    const reply = await postSigned(receiver.webhookUrl(), body, TEST_SECRET);
    expect(reply.status).toBe(200);
    expect(reply.json).toEqual({ id: expect.any(Number), duplicate: false, receivedCount: 1 });
    const stored = await receiver.store.getEvent(reply.json.id);
    expect(stored).toMatchObject({ source: 'checkout', event: 'transfer:succeeded', transferId: body.result.id, validation: 'valid', checkoutId: body.result.checkoutId, email: 'buyer@example.com' });
  });

  it('accepts the signature with a sha256= prefix', async () => {
    const raw = Buffer.from(JSON.stringify(sampleTransferSucceeded()));
    const reply = await send(receiver.webhookUrl(), { method: 'POST', body: raw, headers: { 'content-type': 'application/json', 'x-service-signature': `sha256=${signHmacSha256Hex(TEST_SECRET, raw)}` } });
    expect(reply.status).toBe(200);
  });

  it.each([
    ['missing', undefined, 'missing_signature'],
    ['empty (as in the spec sample call)', '', 'missing_signature'],
    ['wrong', signHmacSha256Hex('another-secret', 'x'), 'invalid_signature'],
    ['truncated', 'abcdef', 'invalid_signature'],
  ])('answers 401 for a %s signature and stores nothing', async (_name, signature, code) => {
    const before = await storedCount();
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (signature !== undefined) headers['x-service-signature'] = signature;
    const reply = await send(receiver.webhookUrl(), { method: 'POST', headers, body: JSON.stringify(sampleTransferSucceeded()) });
    expect(reply.status).toBe(401);
    expectErrorBody(reply, code);
    expect(await storedCount()).toBe(before);
  });

  it('answers 415 for a non-JSON content type, before looking at the signature', async () => {
    const reply = await send(receiver.webhookUrl(), { method: 'POST', headers: { 'content-type': 'text/plain' }, body: '{}' });
    expect(reply.status).toBe(415);
    expectErrorBody(reply, 'unsupported_media_type');
  });

  it('answers 415 for a compressed body (the signature covers the bytes as sent)', async () => {
    const reply = await postSigned(receiver.webhookUrl(), sampleTransferSucceeded(), TEST_SECRET, { headers: { 'content-encoding': 'gzip' } });
    expect(reply.status).toBe(415);
  });

  it('accepts application/json with a charset and +json types', async () => {
    for (const type of ['application/json; charset=utf-8', 'application/cloudevents+json']) {
      const reply = await postSigned(receiver.webhookUrl(), sampleTransferSucceeded(), TEST_SECRET, { headers: { 'content-type': type } });
      expect(reply.status, type).toBe(200);
    }
  });

  it('answers 413 for a body over the limit by Content-Length', async () => {
    const reply = await postSigned(receiver.webhookUrl(), Buffer.alloc(5000, 0x20), TEST_SECRET);
    expect(reply.status).toBe(413);
    expectErrorBody(reply, 'payload_too_large');
  });

  it('answers 413 for a chunked body that grows past the limit, without waiting for its end', async () => {
    const url = new URL(receiver.webhookUrl());
    const status = await new Promise<number>((resolve, reject) => {
      const req = request({ host: url.hostname, port: url.port, path: url.pathname, method: 'POST', headers: { 'content-type': 'application/json', 'x-service-signature': 'ab' } }, (res) => {
        res.resume();
        resolve(res.statusCode!);
      });
      req.on('error', reject);
      // 8 KiB sent, never ended: the receiver must answer on its own once the limit is passed.
      req.write(Buffer.alloc(8192, 0x20));
    });
    expect(status).toBe(413);
  });

  it('answers 400 for a signed body that is not JSON', async () => {
    const reply = await postSigned(receiver.webhookUrl(), Buffer.from('{"event": '), TEST_SECRET);
    expect(reply.status).toBe(400);
    expectErrorBody(reply, 'invalid_json');
  });

  it('answers 400 for invalid UTF-8 instead of silently replacing bytes', async () => {
    const reply = await postSigned(receiver.webhookUrl(), Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x7d]), TEST_SECRET);
    expect(reply.status).toBe(400);
    expectErrorBody(reply, 'invalid_json');
  });

  it('answers 422 listing each schema issue with its path', async () => {
    const body = sampleTransferSucceeded();
    body.result.email = 'not-an-email';
    body.result.quantity = 1.5;
    delete body.result.checkoutId;
    const reply = await postSigned(receiver.webhookUrl(), body, TEST_SECRET);
    expect(reply.status).toBe(422);
    expectErrorBody(reply, 'invalid_payload');
    const paths = reply.json.error.details.issues.map((issue: { path: string }) => issue.path).sort();
    expect(paths).toEqual(['result.checkoutId', 'result.email', 'result.quantity']);
    // A missing field says so, not "expected string, received undefined".
    expect(reply.json.error.details.issues).toContainEqual({ path: 'result.checkoutId', message: 'required (expected string)', code: 'invalid_type' });
  });

  it('answers 422 for a body without the event envelope', async () => {
    const reply = await postSigned(receiver.webhookUrl(), { hello: 'world' }, TEST_SECRET);
    expect(reply.status).toBe(422);
    expect(reply.json.error.details.issues.map((i: { path: string }) => i.path).sort()).toEqual(['event', 'result']);
  });

  it('answers 404 for an unknown source', async () => {
    const reply = await postSigned(receiver.webhookUrl('nope'), sampleTransferSucceeded(), TEST_SECRET);
    expect(reply.status).toBe(404);
    expectErrorBody(reply, 'unknown_source');
  });

  it('answers 405 for other methods on the webhook path and a JSON 404 elsewhere', async () => {
    const get = await send(receiver.webhookUrl());
    expect(get.status).toBe(405);
    expectErrorBody(get, 'method_not_allowed');
    const other = await send(`${receiver.url}/nowhere`);
    expect(other.status).toBe(404);
    expectErrorBody(other, 'not_found');
  });

  it('stores other event names with a valid envelope, marked unrecognised', async () => {
    const reply = await postSigned(receiver.webhookUrl(), { event: 'transfer:refunded', result: { id: 'tr_1', reason: 'requested' } }, TEST_SECRET);
    expect(reply.status).toBe(200);
    expect(await receiver.store.getEvent(reply.json.id)).toMatchObject({ event: 'transfer:refunded', validation: 'unrecognised', transferId: 'tr_1' });
    // A name that is also an Object.prototype property is just another unknown event.
    const prototypeName = await postSigned(receiver.webhookUrl(), { event: 'constructor', result: { id: 'tr_2' } }, TEST_SECRET);
    expect(prototypeName.status).toBe(200);
    expect(await receiver.store.getEvent(prototypeName.json.id)).toMatchObject({ event: 'constructor', validation: 'unrecognised' });
  });

  it('stored nothing for any rejected request but the authentic bodies that fail the schema, held in quarantine', async () => {
    const events = (await receiver.store.listEvents({}, { limit: 1000 })).items;
    // The 200s above: the first valid, the prefixed one, the two content types and the two unrecognised ones.
    expect(events.filter((e) => e.quarantine === null)).toHaveLength(6);
    // The 422 invalid_payload answers: each kept, held, with the schema's issues.
    const held = events.filter((e) => e.quarantine !== null);
    expect(held.length).toBeGreaterThan(0);
    expect(held.every((e) => e.quarantine === 'held' && e.validation === 'invalid' && e.issues?.from === 'schema')).toBe(true);
  });
});

describe('health endpoints', () => {
  it('answers /healthz and /readyz, which says only ready or not; the admin API says why', async () => {
    expect((await send(`${receiver.url}/healthz`)).json).toEqual({ status: 'ok' });
    const ready = await send(`${receiver.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(ready.json).toEqual({ status: 'ready' });
    expect((await send(`${receiver.url}/admin/api/readiness`)).status).toBe(401);
    const checks = await send(`${receiver.url}/admin/api/readiness`, { headers: { authorization: `Bearer ${receiver.adminToken}` } });
    expect(checks.status).toBe(200);
    expect(checks.json).toMatchObject({ status: 'ready', checks: { store: 'ok', rules: { ruleCount: expect.any(Number) }, role: 'all' } });
  });
});
