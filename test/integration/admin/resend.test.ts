import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { verifyHmacSha256Hex } from '../../../src/signing/hmac-sha256-hex.js';
import { postSigned } from '../../helpers/http.js';
import { TEST_SECRET } from '../../helpers/receiver.js';
import { removeTempDirs } from '../../helpers/temp-dir.js';
import { closeAll, startAdminFixture, startSink } from './admin-fixture.js';

afterEach(closeAll);
afterAll(() => removeTempDirs());

const SW_SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
// Odd spacing: a re-serialised body would differ; the resend must carry these exact bytes.
const rawBody = (id: string): Buffer => Buffer.from(`{"event":"transfer:pending" ,"result":{"id":"${id}","amount":1.50}}`);

describe('POST /admin/api/events/:id/resend', () => {
  it('sends the stored raw bytes byte-exact with the original signature headers (mode original)', async () => {
    const sink = await startSink(() => ({ status: 202, body: 'accepted here' }));
    const { api, app } = await startAdminFixture();
    const raw = rawBody('rs-1');
    const stored = await postSigned(app.webhookUrl(), raw, TEST_SECRET, { headers: { 'content-type': 'application/json; charset=utf-8' } });
    const original = (await api(`/events/${stored.json.id}`)).json.event.headers;

    const reply = await api(`/events/${stored.json.id}/resend`, { method: 'POST', body: { url: sink.url, signing: { mode: 'original' } } });
    expect(reply.status).toBe(200);
    expect(reply.json).toEqual({ status: 202, durationMs: expect.any(Number), responseExcerpt: 'accepted here', error: null });
    const [got] = await sink.waitFor(1);
    expect(got!.rawBody.equals(raw)).toBe(true);
    expect(got!.headers['x-service-signature']).toBe(original['x-service-signature']);
    expect(got!.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(verifyHmacSha256Hex([TEST_SECRET], got!.rawBody, String(got!.headers['x-service-signature']))).toBe(true);
    expect(got!.headers.authorization).toBeUndefined();
    // Its own delivery id, the event's id, the time it was sent; no rule planned it.
    expect(got!.headers['x-hookrelay-delivery']).toMatch(/^rsnd_[0-9a-f-]{36}$/);
    expect(got!.headers['x-hookrelay-event-id']).toBe(String(stored.json.id));
    expect(Math.abs(Number(got!.headers['x-hookrelay-timestamp']) - Date.now() / 1000)).toBeLessThan(60);
    expect(got!.headers['x-hookrelay-rule']).toBeUndefined();
  });

  it('keeps the Standard Webhooks headers of a standard-webhooks source, so its original signature still verifies', async () => {
    const sink = await startSink();
    const { api, app } = await startAdminFixture({ overrides: { sources: [{ name: 'std', scheme: 'standard-webhooks', secrets: [SW_SECRET] }] } });
    const raw = rawBody('rs-2');
    const stored = await postSigned(app.webhookUrl('std'), raw, SW_SECRET, { scheme: 'standard-webhooks' });
    expect(stored.status).toBe(200);
    await api(`/events/${stored.json.id}/resend`, { method: 'POST', body: { url: sink.url, signing: { mode: 'original' } } });
    const [got] = await sink.waitFor(1);
    expect(got!.rawBody.equals(raw)).toBe(true);
    expect(() => new Webhook(SW_SECRET).verify(got!.rawBody.toString(), got!.headers as Record<string, string>)).not.toThrow();
    // The signed webhook-id is the original's, not the resend's delivery id.
    expect(got!.headers['webhook-id']).not.toBe(got!.headers['x-hookrelay-delivery']);
    expect(got!.headers['x-hookrelay-delivery']).toMatch(/^rsnd_/);
  });

  it('re-signs with a given secret (hmac-sha256-hex and standard-webhooks) or sends unsigned', async () => {
    const sink = await startSink();
    const { api, ingest } = await startAdminFixture();
    const id = await ingest(JSON.parse(rawBody('rs-3').toString()));
    const resend = (signing: unknown) => api(`/events/${id}/resend`, { method: 'POST', body: { url: sink.url, signing } });

    expect((await resend({ mode: 'resign', scheme: 'hmac-sha256-hex', secret: 'downstream-secret' })).status).toBe(200);
    expect((await resend({ mode: 'resign', scheme: 'standard-webhooks', secret: SW_SECRET })).status).toBe(200);
    expect((await resend({ mode: 'none' })).status).toBe(200);
    const [hmac, standard, unsigned] = await sink.waitFor(3);

    expect(verifyHmacSha256Hex(['downstream-secret'], hmac!.rawBody, String(hmac!.headers['x-service-signature']))).toBe(true);
    expect(verifyHmacSha256Hex([TEST_SECRET], hmac!.rawBody, String(hmac!.headers['x-service-signature']))).toBe(false);
    expect(() => new Webhook(SW_SECRET).verify(standard!.rawBody.toString(), standard!.headers as Record<string, string>)).not.toThrow();
    expect(standard!.headers['x-service-signature']).toBeUndefined();
    expect(unsigned!.headers['x-service-signature']).toBeUndefined();
    expect(unsigned!.headers['webhook-signature']).toBeUndefined();
    for (const got of [hmac, standard, unsigned]) expect(got!.headers['x-hookrelay-event-id']).toBe(String(id));
    expect(new Set([hmac, standard, unsigned].map((got) => got!.headers['x-hookrelay-delivery'])).size).toBe(3);
    for (const got of [hmac, standard, unsigned]) expect(got!.rawBody.toString()).toBe(JSON.stringify(JSON.parse(rawBody('rs-3').toString())));
  });

  it('reports a failed attempt as data (no answer: status null, error code)', async () => {
    const sink = await startSink();
    const closedUrl = sink.url;
    await sink.close(); // nothing listens on that loopback port any more
    const { api, ingest } = await startAdminFixture();
    const id = await ingest();
    const reply = await api(`/events/${id}/resend`, { method: 'POST', body: { url: closedUrl, signing: { mode: 'none' } } });
    expect(reply.status).toBe(200);
    expect(reply.json).toMatchObject({ status: null, error: { code: 'ECONNREFUSED' } });
  });

  it('refuses a destination the SSRF guard does not allow (loopback not allowlisted) with 400 destination_refused', async () => {
    const sink = await startSink();
    const { api, ingest } = await startAdminFixture({ delivery: { allowNetworks: [] } });
    const id = await ingest();
    const reply = await api(`/events/${id}/resend`, { method: 'POST', body: { url: sink.url, signing: { mode: 'original' } } });
    expect(reply.status).toBe(400);
    expect(reply.json.error.code).toBe('destination_refused');
    expect(sink.received).toEqual([]);
  });

  it('validates the body: http(s) URL, known mode, a usable standard-webhooks secret; 404 for an unknown event', async () => {
    const { api, ingest } = await startAdminFixture();
    const id = await ingest();
    const paths = async (body: unknown): Promise<string[]> => {
      const reply = await api(`/events/${id}/resend`, { method: 'POST', body });
      expect(reply.status).toBe(422);
      return reply.json.error.details.issues.map((i: { path: string }) => i.path);
    };
    expect(await paths({ url: 'ftp://127.0.0.1/x', signing: { mode: 'none' } })).toEqual(['url']);
    expect(await paths({ url: 'http://127.0.0.1:1/x', signing: { mode: 'sometimes' } })).toEqual(['signing.mode']);
    expect(await paths({ url: 'http://127.0.0.1:1/x', signing: { mode: 'resign', scheme: 'hmac-sha256-hex' } })).toEqual(['signing.secret']);
    expect(await paths({ url: 'http://127.0.0.1:1/x', signing: { mode: 'resign', scheme: 'standard-webhooks', secret: 'not base64 at all!' } })).toEqual(['signing.secret']);
    expect((await api('/events/999/resend', { method: 'POST', body: { url: 'http://127.0.0.1:1/x', signing: { mode: 'none' } } })).status).toBe(404);
  });
});
