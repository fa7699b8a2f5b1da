import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { verifyHmacSha256Hex } from '../../../src/signing/hmac-sha256-hex.js';
import { SAMPLE_CHECKOUT, startMock, type RunningMock } from './support/mock-harness.js';
import { startWebhookSink, type ReceivedWebhook, type WebhookSink } from '../../helpers/webhook-sink.js';

const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}\+00:00$/;
const SECRET = 'whsec_delivery_test_secret';
const SPEC_RESULT_KEYS = [
  'id', 'checkoutId', 'walletAddress', 'walletType', 'email', 'quantity', 'paymentMethod', 'networkFeeUsd',
  'totalPriceUsd', 'createdAt', 'paymentCompletedAt', 'transferCompletedAt', 'claimedTokens',
];

let mock: RunningMock;
const sinks: WebhookSink[] = [];

beforeEach(async () => {
  mock = await startMock();
});
afterEach(async () => {
  await mock.close();
  await Promise.all(sinks.splice(0).map((sink) => sink.close()));
});

async function sink(statusFor?: (index: number) => number): Promise<WebhookSink> {
  const started = await startWebhookSink(statusFor);
  sinks.push(started);
  return started;
}

async function checkoutWith(webhookUrls: string[], extra: Record<string, unknown> = {}): Promise<string> {
  const created = await mock.call('POST', '/api/v1/checkout', { ...SAMPLE_CHECKOUT, webhookUrls, webhookSecret: SECRET, ...extra });
  expect(created.status).toBe(200);
  return created.json.result.id;
}

function signatureOf(webhook: ReceivedWebhook): string | undefined {
  const header = webhook.headers['x-service-signature'];
  return Array.isArray(header) ? header[0] : header;
}

describe('transfer:succeeded delivery', () => {
  it('POSTs the spec body, signed over the exact bytes received, and reports the delivery', async () => {
    const receiver = await sink();
    const checkoutId = await checkoutWith([receiver.url]);
    const wallet = '0x00000000000000000000000000000000000000aa';

    const purchase = await mock.call('POST', `/mock/checkout/${checkoutId}/purchase`, {
      email: 'ada@example.com',
      walletAddress: wallet,
      quantity: 3,
      paymentMethod: 'BUY_WITH_CRYPTO',
    });
    expect(purchase.status).toBe(200);

    const [webhook] = receiver.received;
    expect(receiver.received).toHaveLength(1);
    expect(webhook!.method).toBe('POST');
    expect(webhook!.path).toBe('/hooks');
    expect(webhook!.headers['content-type']).toBe('application/json');
    expect(verifyHmacSha256Hex([SECRET], webhook!.rawBody, signatureOf(webhook!)!)).toBe(true);
    expect(signatureOf(webhook!)).toMatch(/^[0-9a-f]{64}$/);

    const body = JSON.parse(webhook!.rawBody.toString('utf8'));
    expect(Object.keys(body)).toEqual(['event', 'result']);
    expect(body.event).toBe('transfer:succeeded');
    expect(Object.keys(body.result)).toEqual(SPEC_RESULT_KEYS);
    expect(body.result).toMatchObject({
      checkoutId,
      walletAddress: wallet,
      walletType: 'EXTERNAL',
      email: 'ada@example.com',
      quantity: 3,
      paymentMethod: 'BUY_WITH_CRYPTO',
      networkFeeUsd: 0.02,
      totalPriceUsd: 0.77, // 3 × 0.5 MATIC at 0.5 USD + 0.02 fee
    });
    const { createdAt, paymentCompletedAt, transferCompletedAt } = body.result;
    for (const stamp of [createdAt, paymentCompletedAt, transferCompletedAt]) expect(stamp).toMatch(TIMESTAMP);
    expect(Date.parse(createdAt)).toBeLessThanOrEqual(Date.parse(paymentCompletedAt));
    expect(Date.parse(paymentCompletedAt)).toBeLessThanOrEqual(Date.parse(transferCompletedAt));

    const { tokenIds, transactionHashes } = body.result.claimedTokens;
    expect(tokenIds).toEqual(['1', '2', '3']);
    const hashes = Object.keys(transactionHashes);
    expect(hashes).toHaveLength(1);
    expect(hashes[0]).toMatch(/^0x[0-9a-f]{64}$/);
    expect(transactionHashes[hashes[0]!]).toEqual(tokenIds);

    expect(purchase.json.transfer).toEqual(body.result);
    expect(purchase.json.deliveries).toEqual([
      expect.objectContaining({ url: receiver.url, status: 200, ok: true, attempts: 1, error: null, signature: 'valid', kind: 'purchase' }),
    ]);
    expect(purchase.json.deliveries[0].body).toBe(webhook!.rawBody.toString('utf8'));

    const recorded = await mock.call('GET', `/mock/checkout/${checkoutId}/deliveries`);
    expect(recorded.json.result).toEqual(purchase.json.deliveries);
    const transfers = await mock.call('GET', `/mock/checkout/${checkoutId}/transfers`);
    expect(transfers.json.result).toEqual([purchase.json.transfer]);
  });

  it('uses realistic defaults for an empty purchase request and keeps counting token ids', async () => {
    const receiver = await sink();
    const checkoutId = await checkoutWith([receiver.url]);
    const first = await mock.call('POST', `/mock/checkout/${checkoutId}/purchase`);
    const second = await mock.call('POST', `/mock/checkout/${checkoutId}/purchase`, { quantity: 2 });
    expect(first.json.transfer).toMatchObject({ email: 'buyer@example.com', quantity: 1, paymentMethod: 'BUY_WITH_CARD', walletType: 'EMBEDDED' });
    expect(first.json.transfer.walletAddress).toMatch(/^0x[0-9a-f]{40}$/);
    expect(first.json.transfer.claimedTokens.tokenIds).toEqual(['1']);
    expect(second.json.transfer.claimedTokens.tokenIds).toEqual(['2', '3']);
    expect(first.json.transfer.id).not.toBe(second.json.transfer.id);
    await receiver.waitFor(2);
  });

  it('delivers to every webhook URL of the checkout', async () => {
    const [a, b] = [await sink(), await sink()];
    const checkoutId = await checkoutWith([a.url, b.url]);
    const purchase = await mock.call('POST', `/mock/checkout/${checkoutId}/purchase`, {});
    expect(purchase.json.deliveries.map((d: { url: string }) => d.url)).toEqual([a.url, b.url]);
    expect(a.received[0]!.rawBody.equals(b.received[0]!.rawBody)).toBe(true);
  });

  it('retries a 500 and records the attempts when the retry gets 200', async () => {
    const receiver = await sink((index) => (index === 0 ? 500 : 200));
    const checkoutId = await checkoutWith([receiver.url]);
    const purchase = await mock.call('POST', `/mock/checkout/${checkoutId}/purchase`, {});
    expect(purchase.json.deliveries).toEqual([expect.objectContaining({ status: 200, ok: true, attempts: 2, error: null })]);
    expect(receiver.received).toHaveLength(2);
    expect(receiver.received[0]!.rawBody.equals(receiver.received[1]!.rawBody)).toBe(true);
  });

  it('gives up after the configured retries and records the last status', async () => {
    const receiver = await sink(() => 503);
    const checkoutId = await checkoutWith([receiver.url]);
    const purchase = await mock.call('POST', `/mock/checkout/${checkoutId}/purchase`, {});
    expect(purchase.json.deliveries).toEqual([expect.objectContaining({ status: 503, ok: false, attempts: 3, error: 'HTTP 503' })]);
    expect(receiver.received).toHaveLength(3);
  });

  it('does not retry a 4xx answer', async () => {
    const receiver = await sink(() => 401);
    const checkoutId = await checkoutWith([receiver.url]);
    const purchase = await mock.call('POST', `/mock/checkout/${checkoutId}/purchase`, {});
    expect(purchase.json.deliveries).toEqual([expect.objectContaining({ status: 401, ok: false, attempts: 1 })]);
    expect(receiver.received).toHaveLength(1);
  });

  it('retries network errors and records them', async () => {
    const closed = await startWebhookSink();
    await closed.close(); // nothing listens on this port any more
    const checkoutId = await checkoutWith([closed.url]);
    const purchase = await mock.call('POST', `/mock/checkout/${checkoutId}/purchase`, {});
    expect(purchase.json.deliveries).toEqual([
      expect.objectContaining({ status: null, ok: false, attempts: 3, error: expect.stringContaining('ECONNREFUSED') }),
    ]);
  });
});

describe('automation options', () => {
  it('signature "invalid" sends a well-formed HMAC that does not verify', async () => {
    const receiver = await sink();
    const checkoutId = await checkoutWith([receiver.url]);
    const purchase = await mock.call('POST', `/mock/checkout/${checkoutId}/purchase`, { signature: 'invalid' });
    const [webhook] = receiver.received;
    expect(signatureOf(webhook!)).toMatch(/^[0-9a-f]{64}$/);
    expect(verifyHmacSha256Hex([SECRET], webhook!.rawBody, signatureOf(webhook!)!)).toBe(false);
    expect(purchase.json.deliveries[0].signature).toBe('invalid');
  });

  it('signature "empty" sends an empty X-Service-Signature header, as the spec sample does', async () => {
    const receiver = await sink();
    const checkoutId = await checkoutWith([receiver.url]);
    await mock.call('POST', `/mock/checkout/${checkoutId}/purchase`, { signature: 'empty' });
    expect(receiver.received[0]!.headers).toHaveProperty('x-service-signature', '');
  });

  it('duplicate sends the identical signed bytes twice and records both deliveries', async () => {
    const receiver = await sink();
    const checkoutId = await checkoutWith([receiver.url]);
    const purchase = await mock.call('POST', `/mock/checkout/${checkoutId}/purchase`, { duplicate: true });
    expect(receiver.received).toHaveLength(2);
    const [first, second] = receiver.received;
    expect(first!.rawBody.equals(second!.rawBody)).toBe(true);
    expect(signatureOf(first!)).toBe(signatureOf(second!));
    expect(verifyHmacSha256Hex([SECRET], second!.rawBody, signatureOf(second!)!)).toBe(true);
    expect(purchase.json.deliveries).toHaveLength(2);
    expect((await mock.call('GET', `/mock/checkout/${checkoutId}/transfers`)).json.result).toHaveLength(1);
  });

  it('validates the purchase request (422 with paths) and the checkout id (400/404)', async () => {
    const checkoutId = await checkoutWith([]);
    const invalid = await mock.call('POST', `/mock/checkout/${checkoutId}/purchase`, {
      quantity: 0,
      email: 'nope',
      walletAddress: '0xzz',
      signature: 'forged',
    });
    expect(invalid.status).toBe(422);
    expect(invalid.json.error.details.issues.map((issue: { path: string }) => issue.path).sort()).toEqual([
      'email',
      'quantity',
      'signature',
      'walletAddress',
    ]);
    expect((await mock.call('POST', '/mock/checkout/abc/purchase', {})).status).toBe(400);
    const unknown = await mock.call('POST', '/mock/checkout/7d8f0c1e-4b7a-4c55-9a0e-2f1d3c4b5a69/purchase', {});
    expect(unknown.status).toBe(404);
    expect((await mock.call('GET', '/mock/checkout/7d8f0c1e-4b7a-4c55-9a0e-2f1d3c4b5a69/deliveries')).status).toBe(404);
  });

  it('a checkout without webhook URLs completes the purchase with no deliveries', async () => {
    const checkoutId = await checkoutWith([]);
    const purchase = await mock.call('POST', `/mock/checkout/${checkoutId}/purchase`, {});
    expect(purchase.status).toBe(200);
    expect(purchase.json.deliveries).toEqual([]);
  });
});

describe('one-time link', () => {
  it('allows one purchase; the next answers 410 gone and sends no webhook', async () => {
    const receiver = await sink();
    const checkoutId = await checkoutWith([receiver.url], { oneTimeLink: true });
    expect((await mock.call('POST', `/mock/checkout/${checkoutId}/purchase`, {})).status).toBe(200);

    const again = await mock.call('POST', `/mock/checkout/${checkoutId}/purchase`, {});
    expect(again.status).toBe(410);
    expect(again.json.error.code).toBe('gone');

    const page = await fetch(`${mock.url}/checkout/${checkoutId}`);
    expect(page.status).toBe(410);
    expect(await page.text()).toContain('already used');
    expect(receiver.received).toHaveLength(1);
  });

  it('lets exactly one of several concurrent purchases through', async () => {
    const receiver = await sink();
    const checkoutId = await checkoutWith([receiver.url], { oneTimeLink: true });
    const statuses = await Promise.all(
      Array.from({ length: 5 }, () => mock.call('POST', `/mock/checkout/${checkoutId}/purchase`, {}).then((r) => r.status)),
    );
    expect(statuses.sort()).toEqual([200, 410, 410, 410, 410]);
    expect(receiver.received).toHaveLength(1);
  });
});
