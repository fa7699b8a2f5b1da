import { describe, expect, it } from 'vitest';
import { verifyHmacSha256Hex } from '../../../src/signing/hmac-sha256-hex.js';
import { getPage, postForm } from './support/forms.js';
import { SAMPLE_CHECKOUT, mockAndSinkForEachTest, type RunningMock } from './support/mock-harness.js';
import type { WebhookSink } from '../../helpers/webhook-sink.js';

let mock: RunningMock;
let sink: WebhookSink;

mockAndSinkForEachTest((m, s) => {
  mock = m;
  sink = s;
});

async function createCheckout(extra: Record<string, unknown> = {}) {
  const created = await mock.call('POST', '/api/v1/checkout', { ...SAMPLE_CHECKOUT, webhookUrls: [sink.url], ...extra });
  return created.json.result as { id: string; webhookSecret: string };
}

const VALID_FORM = { email: 'grace@example.com', walletAddress: '', quantity: '2', paymentMethod: 'BUY_WITH_CARD' };

describe('buyer page', () => {
  it('renders a self-contained HTML page with title, price, form and Buy button, without auth', async () => {
    const { id } = await createCheckout();
    const response = await getPage(`${mock.url}/checkout/${id}`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/html/);
    expect(response.headers.get('content-security-policy')).toContain("default-src 'none'");
    const page = await response.text();
    expect(page).toContain('Genesis Passes');
    expect(page).toContain('0.5 MATIC');
    for (const name of ['email', 'walletAddress', 'quantity', 'paymentMethod']) expect(page).toContain(`name="${name}"`);
    expect(page).toContain('value="BUY_WITH_CRYPTO"');
    expect(page).toMatch(/<button type="submit"[^>]*>Buy<\/button>/);
    expect(page).not.toMatch(/<script|<link|https?:\/\/(?!shop\.example\.com)[^"]*\.(css|js)/);
  });

  it('escapes seller-supplied text', async () => {
    const { id } = await createCheckout({ collectionTitle: '<img src=x onerror=alert(1)> & Co' });
    const page = await (await getPage(`${mock.url}/checkout/${id}`)).text();
    expect(page).toContain('&lt;img src=x onerror=alert(1)&gt; &amp; Co');
    expect(page).not.toContain('<img src=x');
  });

  it('completes a purchase from the form: success page, stored transfer, signed webhook', async () => {
    const { id, webhookSecret } = await createCheckout();
    const response = await postForm(`${mock.url}/checkout/${id}`, VALID_FORM);
    expect(response.status).toBe(200);
    const page = await response.text();
    const [transfer] = (await mock.call('GET', `/mock/checkout/${id}/transfers`)).json.result;
    expect(transfer).toMatchObject({ email: 'grace@example.com', quantity: 2, paymentMethod: 'BUY_WITH_CARD', walletType: 'EMBEDDED' });
    expect(page).toContain(transfer.id);
    expect(page).toContain('href="https://shop.example.com/thanks"');

    const [webhook] = await sink.waitFor(1);
    expect(verifyHmacSha256Hex([webhookSecret], webhook!.rawBody, String(webhook!.headers['x-service-signature']))).toBe(true);
    expect(JSON.parse(webhook!.rawBody.toString()).result).toEqual(transfer);
  });

  it('re-renders the form with messages (422) and keeps the entered values when input is invalid', async () => {
    const { id } = await createCheckout();
    const response = await postForm(`${mock.url}/checkout/${id}`, {
      email: 'not-an-email',
      walletAddress: '0x1234',
      quantity: '0',
      paymentMethod: 'BUY_WITH_GOLD',
    });
    expect(response.status).toBe(422);
    const page = await response.text();
    expect(page).toContain('enter your e-mail address');
    expect(page).toContain('must be 0x followed by 40 hexadecimal digits');
    expect(page).toContain('choose a payment method');
    expect(page).toContain('value="not-an-email"');
    expect(page.match(/role="alert"/g)).toHaveLength(4);
    expect((await mock.call('GET', `/mock/checkout/${id}/transfers`)).json.result).toEqual([]);
    expect(sink.received).toHaveLength(0);
  });

  it('answers 410 with an "already used" page once a one-time link was bought', async () => {
    const { id } = await createCheckout({ oneTimeLink: true });
    expect((await postForm(`${mock.url}/checkout/${id}`, VALID_FORM)).status).toBe(200);
    for (const response of [await getPage(`${mock.url}/checkout/${id}`), await postForm(`${mock.url}/checkout/${id}`, VALID_FORM)]) {
      expect(response.status).toBe(410);
      expect(await response.text()).toContain('This checkout link was already used');
    }
    expect(sink.received).toHaveLength(1);
  });

  it('answers a 404 page for deleted, unknown and malformed checkout ids', async () => {
    const { id } = await createCheckout();
    await mock.call('DELETE', `/api/v1/checkout/${id}`);
    for (const path of [`/checkout/${id}`, '/checkout/7d8f0c1e-4b7a-4c55-9a0e-2f1d3c4b5a69', '/checkout/nope']) {
      const response = await getPage(`${mock.url}${path}`);
      expect(response.status).toBe(404);
      expect(await response.text()).toContain('Checkout not found');
    }
    expect((await postForm(`${mock.url}/checkout/${id}`, VALID_FORM)).status).toBe(404);
  });
});
