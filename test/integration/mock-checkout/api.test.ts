import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SAMPLE_CHECKOUT, startMock, type RunningMock } from './support/mock-harness.js';

const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}\+00:00$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const UNKNOWN_ID = '7d8f0c1e-4b7a-4c55-9a0e-2f1d3c4b5a69';

let mock: RunningMock;
beforeEach(async () => {
  mock = await startMock();
});
afterEach(async () => {
  await mock.close();
});

async function createCheckout(overrides: Record<string, unknown> = {}) {
  const created = await mock.call('POST', '/api/v1/checkout', { ...SAMPLE_CHECKOUT, ...overrides });
  expect(created.status).toBe(200);
  return created.json.result as Record<string, any>;
}

describe('authentication', () => {
  it.each([
    ['no header', null],
    ['a wrong key', 'Bearer not-the-key'],
    ['another scheme', 'Basic dGVzdA=='],
  ])('answers 401 JSON for %s', async (_case, auth) => {
    const response = await mock.call('GET', '/api/v1/checkout', undefined, { auth });
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBe('Bearer');
    expect(response.json).toEqual({ error: { code: 'unauthorized', message: expect.any(String), details: null } });
  });

  it('protects the automation hooks with the same key', async () => {
    const response = await mock.call('GET', `/mock/checkout/${UNKNOWN_ID}/deliveries`, undefined, { auth: null });
    expect(response.status).toBe(401);
    expect(response.json.error.code).toBe('unauthorized');
  });
});

describe('POST /api/v1/checkout', () => {
  it('creates a checkout and returns checkoutUrl plus the stored record', async () => {
    const response = await mock.call('POST', '/api/v1/checkout', {
      ...SAMPLE_CHECKOUT,
      webhookUrls: ['http://127.0.0.1:9/hooks'],
      oneTimeLink: true,
      webhookSecret: 'whsec_test_secret',
      unknownField: 'ignored',
    });
    expect(response.status).toBe(200);
    const { checkoutUrl, result } = response.json;
    expect(result.id).toMatch(UUID);
    expect(checkoutUrl).toBe(`${mock.url}/checkout/${result.id}`);
    expect(result.createdAt).toMatch(TIMESTAMP);
    expect(Math.abs(Date.parse(result.createdAt) - Date.now())).toBeLessThan(10_000);
    expect(result).toEqual({
      id: result.id,
      createdAt: result.createdAt,
      updatedAt: result.createdAt,
      ...SAMPLE_CHECKOUT,
      webhookUrls: ['http://127.0.0.1:9/hooks'],
      oneTimeLink: true,
      webhookSecret: 'whsec_test_secret',
    });
    expect(Object.keys(result).slice(0, 2)).toEqual(['id', 'createdAt']);
  });

  it('fills optional fields with null, no webhooks, a reusable link and a generated secret', async () => {
    const { contractAddress, collectionTitle, priceValue, priceCurrency } = SAMPLE_CHECKOUT;
    const result = await createCheckout({ contractChain: undefined, contractType: undefined, successCallbackUrl: undefined });
    expect(result).toMatchObject({ contractAddress, collectionTitle, priceValue, priceCurrency });
    expect(result).toMatchObject({ contractChain: null, contractType: null, successCallbackUrl: null, webhookUrls: [], oneTimeLink: false });
    expect(result.webhookSecret).toMatch(/^whsec_[A-Za-z0-9_-]{32}$/);
    const other = await createCheckout();
    expect(other.webhookSecret).not.toBe(result.webhookSecret);
  });

  it('answers 400 invalid_json for malformed JSON', async () => {
    const response = await mock.call('POST', '/api/v1/checkout', undefined, { rawBody: '{"collectionTitle": ' });
    expect(response.status).toBe(400);
    expect(response.json.error.code).toBe('invalid_json');
  });

  it('answers 413 for a body over 100 kB', async () => {
    const response = await mock.call('POST', '/api/v1/checkout', { ...SAMPLE_CHECKOUT, collectionTitle: 'x'.repeat(110_000) });
    expect(response.status).toBe(413);
    expect(response.json.error.code).toBe('payload_too_large');
  });

  it('answers 415 when the body is not JSON', async () => {
    const response = await mock.call('POST', '/api/v1/checkout', undefined, { rawBody: 'a=b', contentType: 'application/x-www-form-urlencoded' });
    expect(response.status).toBe(415);
    expect(response.json.error.code).toBe('unsupported_media_type');
  });

  it('answers 422 with the path of every invalid or missing field', async () => {
    const response = await mock.call('POST', '/api/v1/checkout', {
      contractAddress: '0x123',
      contractType: 'drop-v2',
      successCallbackUrl: 'not a url',
      priceValue: -1,
      priceCurrency: 'matic',
      webhookUrls: ['http://127.0.0.1:1/ok', 'ftp://127.0.0.1/file', 'not a url'],
    });
    expect(response.status).toBe(422);
    expect(response.json.error.code).toBe('validation_failed');
    const { issues } = response.json.error.details;
    const paths = issues.map((issue: { path: string }) => issue.path);
    expect(paths.sort()).toEqual([
      'collectionTitle',
      'contractAddress',
      'contractType',
      'priceCurrency',
      'priceValue',
      'successCallbackUrl',
      'webhookUrls.1',
      'webhookUrls.2',
    ]);
    const messageAt = (path: string) => issues.find((issue: { path: string }) => issue.path === path).message;
    expect(messageAt('priceValue')).toBe('must be 0 or more');
    expect(messageAt('collectionTitle')).toBe('is required');
    expect(messageAt('contractAddress')).toBe('must be 0x followed by 40 hexadecimal digits');
    expect(messageAt('webhookUrls.2')).toBe('must be an http(s) URL');
    for (const issue of issues) expect(issue).toEqual({ path: expect.any(String), message: expect.any(String), code: expect.any(String) });
  });

  it('refuses webhook URLs that are not loopback unless remote webhooks are allowed', async () => {
    const refused = await mock.call('POST', '/api/v1/checkout', { ...SAMPLE_CHECKOUT, webhookUrls: ['https://hooks.example.com/x'] });
    expect(refused.status).toBe(422);
    expect(refused.json.error.details.issues).toEqual([
      { path: 'webhookUrls.0', message: expect.stringContaining('localhost'), code: 'custom' },
    ]);

    const permissive = await startMock({ allowRemoteWebhooks: true });
    try {
      const accepted = await permissive.call('POST', '/api/v1/checkout', { ...SAMPLE_CHECKOUT, webhookUrls: ['https://hooks.example.com/x'] });
      expect(accepted.status).toBe(200);
    } finally {
      await permissive.close();
    }
  });
});

describe('GET /api/v1/checkout (list)', () => {
  it('pages newest first with an opaque cursor until nextCursor is null', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await createCheckout({ collectionTitle: `Drop ${i}` })).id);

    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const query: string = cursor ? `?limit=2&cursor=${encodeURIComponent(cursor)}` : '?limit=2';
      const page = await mock.call('GET', `/api/v1/checkout${query}`);
      expect(page.status).toBe(200);
      expect(page.json.result.length).toBeLessThanOrEqual(2);
      seen.push(...page.json.result.map((c: { id: string }) => c.id));
      cursor = page.json.nextCursor;
      pages += 1;
    } while (cursor !== null);

    expect(pages).toBe(3);
    expect(seen).toEqual([...ids].reverse());
  });

  it('defaults to 20 items per page', async () => {
    for (let i = 0; i < 21; i++) await createCheckout();
    const page = await mock.call('GET', '/api/v1/checkout');
    expect(page.json.result).toHaveLength(20);
    expect(page.json.nextCursor).toEqual(expect.any(String));
  });

  it.each(['limit=0', 'limit=101', 'limit=two', 'cursor=bm9wZQ'])('answers 400 for %s', async (query) => {
    const response = await mock.call('GET', `/api/v1/checkout?${query}`);
    expect(response.status).toBe(400);
    expect(response.json.error.code).toBe('bad_request');
  });
});

describe('single checkout', () => {
  it('gets a checkout by id', async () => {
    const created = await createCheckout();
    const response = await mock.call('GET', `/api/v1/checkout/${created.id}`);
    expect(response.status).toBe(200);
    expect(response.json).toEqual({ checkoutUrl: `${mock.url}/checkout/${created.id}`, result: created });
  });

  it('edits only the given fields, clears optional ones with null, and bumps updatedAt', async () => {
    const created = await createCheckout();
    await new Promise((resolve) => setTimeout(resolve, 5));
    const response = await mock.call('POST', `/api/v1/checkout/${created.id}`, {
      priceValue: 2,
      contractType: null,
      webhookUrls: ['http://localhost:4000/in'],
    });
    expect(response.status).toBe(200);
    expect(response.json.result).toEqual({
      ...created,
      priceValue: 2,
      contractType: null,
      webhookUrls: ['http://localhost:4000/in'],
      updatedAt: expect.stringMatching(TIMESTAMP),
    });
    expect(response.json.result.updatedAt > created.updatedAt).toBe(true);
    expect((await mock.call('GET', `/api/v1/checkout/${created.id}`)).json.result).toEqual(response.json.result);
  });

  it('validates edits like creates (422 with paths) and rejects null for required fields', async () => {
    const created = await createCheckout();
    const response = await mock.call('POST', `/api/v1/checkout/${created.id}`, { priceValue: 'free', collectionTitle: null });
    expect(response.status).toBe(422);
    expect(response.json.error.details.issues.map((issue: { path: string }) => issue.path)).toEqual(['collectionTitle', 'priceValue']);
    expect((await mock.call('GET', `/api/v1/checkout/${created.id}`)).json.result).toEqual(created);
  });

  it('deletes a checkout, after which it is 404 everywhere', async () => {
    const created = await createCheckout();
    const deleted = await mock.call('DELETE', `/api/v1/checkout/${created.id}`);
    expect(deleted.status).toBe(200);
    expect(deleted.json).toEqual({ result: { id: created.id, deleted: true } });
    expect((await mock.call('GET', `/api/v1/checkout/${created.id}`)).status).toBe(404);
    expect((await mock.call('DELETE', `/api/v1/checkout/${created.id}`)).status).toBe(404);
    expect((await mock.call('GET', '/api/v1/checkout')).json.result).toEqual([]);
  });

  it.each([
    ['GET', undefined],
    ['POST', { priceValue: 1 }],
    ['DELETE', undefined],
  ])('%s answers 404 not_found for an unknown id and 400 bad_request for a non-UUID id', async (method, body) => {
    const unknown = await mock.call(method, `/api/v1/checkout/${UNKNOWN_ID}`, body);
    expect(unknown.status).toBe(404);
    expect(unknown.json.error.code).toBe('not_found');
    const malformed = await mock.call(method, '/api/v1/checkout/not-a-uuid', body);
    expect(malformed.status).toBe(400);
    expect(malformed.json.error.code).toBe('bad_request');
  });

  it('answers 404 JSON for unknown API routes', async () => {
    const response = await mock.call('GET', '/api/v1/nothing-here');
    expect(response.status).toBe(404);
    expect(response.json.error.code).toBe('not_found');
  });
});
