import { describe, expect, it } from 'vitest';
import { verifyHmacSha256Hex } from '../../../src/signing/hmac-sha256-hex.js';
import { getPage, postForm } from './support/forms.js';
import { SAMPLE_CHECKOUT, TEST_API_KEY, mockAndSinkForEachTest, type RunningMock } from './support/mock-harness.js';
import type { WebhookSink } from '../../helpers/webhook-sink.js';

let mock: RunningMock;
let sink: WebhookSink;

mockAndSinkForEachTest((m, s) => {
  mock = m;
  sink = s;
});

async function logIn(): Promise<string> {
  const response = await postForm(`${mock.url}/dashboard/login`, { apiKey: TEST_API_KEY });
  expect(response.status).toBe(303);
  return response.headers.get('set-cookie')!.split(';')[0]!;
}

const FORM = {
  collectionTitle: 'Dashboard Drop',
  contractAddress: SAMPLE_CHECKOUT.contractAddress,
  contractChain: 'polygon',
  contractType: '',
  priceValue: '1.25',
  priceCurrency: 'USDC',
  successCallbackUrl: '',
  webhookUrls: '',
  webhookSecret: '',
};

describe('dashboard log-in', () => {
  it('redirects to the log-in form without a session', async () => {
    for (const path of ['/dashboard', '/dashboard/checkouts/new']) {
      const response = await getPage(`${mock.url}${path}`);
      expect(response.status).toBe(303);
      expect(response.headers.get('location')).toBe('/dashboard/login');
    }
    expect((await postForm(`${mock.url}/dashboard/checkouts`, FORM)).status).toBe(303);
    expect((await mock.call('GET', '/api/v1/checkout')).json.result).toEqual([]);
  });

  it('refuses a wrong key with 401 and sets no cookie', async () => {
    const response = await postForm(`${mock.url}/dashboard/login`, { apiKey: 'wrong' });
    expect(response.status).toBe(401);
    expect(response.headers.get('set-cookie')).toBeNull();
    expect(await response.text()).toContain('not the API key');
  });

  it('sets an HttpOnly SameSite=Strict session cookie for the right key; log-out ends the session', async () => {
    const response = await postForm(`${mock.url}/dashboard/login`, { apiKey: TEST_API_KEY });
    const setCookie = response.headers.get('set-cookie')!;
    expect(setCookie).toMatch(/HttpOnly/);
    expect(setCookie).toMatch(/SameSite=Strict/);
    expect(setCookie).toMatch(/Path=\/dashboard/);
    const cookie = setCookie.split(';')[0]!;
    expect((await getPage(`${mock.url}/dashboard`, cookie)).status).toBe(200);

    await postForm(`${mock.url}/dashboard/logout`, {}, cookie);
    expect((await getPage(`${mock.url}/dashboard`, cookie)).status).toBe(303);
  });
});

describe('dashboard checkouts', () => {
  it('creates, edits (webhook URLs one per line), test-sends and deletes a checkout', async () => {
    const cookie = await logIn();
    const created = await postForm(`${mock.url}/dashboard/checkouts`, FORM, cookie);
    expect(created.status).toBe(303);
    const location = created.headers.get('location')!;
    const id = /\/dashboard\/checkouts\/([0-9a-f-]{36})\?notice=created$/.exec(location)![1]!;
    const stored = (await mock.call('GET', `/api/v1/checkout/${id}`)).json.result;
    expect(stored).toMatchObject({ collectionTitle: 'Dashboard Drop', priceValue: 1.25, priceCurrency: 'USDC', contractType: null, webhookUrls: [] });

    const list = await (await getPage(`${mock.url}/dashboard`, cookie)).text();
    expect(list).toContain('Dashboard Drop');

    const edited = await postForm(
      `${mock.url}/dashboard/checkouts/${id}`,
      { ...FORM, contractType: 'ACME_NFT_DROP_V2', webhookUrls: `${sink.url}\r\n\r\n  http://localhost:1/second  \n`, webhookSecret: stored.webhookSecret },
      cookie,
    );
    expect(edited.status).toBe(303);
    const after = (await mock.call('GET', `/api/v1/checkout/${id}`)).json.result;
    expect(after).toMatchObject({ contractType: 'ACME_NFT_DROP_V2', webhookUrls: [sink.url, 'http://localhost:1/second'], webhookSecret: stored.webhookSecret });

    const detail = await (await getPage(`${mock.url}/dashboard/checkouts/${id}`, cookie)).text();
    expect(detail).toContain('Advanced Options');
    expect(detail).toContain(`${sink.url}\nhttp://localhost:1/second</textarea>`);

    const sent = await postForm(`${mock.url}/dashboard/checkouts/${id}/test-webhook`, {}, cookie);
    expect(sent.headers.get('location')).toBe(`/dashboard/checkouts/${id}?notice=test-sent`);
    const [webhook] = await sink.waitFor(1);
    expect(verifyHmacSha256Hex([stored.webhookSecret], webhook!.rawBody, String(webhook!.headers['x-service-signature']))).toBe(true);
    expect(JSON.parse(webhook!.rawBody.toString())).toMatchObject({ event: 'transfer:succeeded', result: { checkoutId: id } });
    const withDeliveries = await (await getPage(`${mock.url}/dashboard/checkouts/${id}`, cookie)).text();
    expect(withDeliveries.match(/data-testid="delivery-row"/g)).toHaveLength(2);
    expect(withDeliveries).toContain('<td class="status-ok">200</td>');
    expect((await mock.call('GET', `/mock/checkout/${id}/transfers`)).json.result).toEqual([]);

    const deleted = await postForm(`${mock.url}/dashboard/checkouts/${id}/delete`, {}, cookie);
    expect(deleted.headers.get('location')).toBe('/dashboard?notice=deleted');
    expect((await mock.call('GET', `/api/v1/checkout/${id}`)).status).toBe(404);
  });

  it('re-renders the form with field messages (422) on invalid input and stores nothing', async () => {
    const cookie = await logIn();
    const response = await postForm(
      `${mock.url}/dashboard/checkouts`,
      { ...FORM, collectionTitle: '', priceValue: 'cheap', priceCurrency: '', webhookUrls: 'http://localhost:1/ok\nnot a url' },
      cookie,
    );
    expect(response.status).toBe(422);
    const page = await response.text();
    expect(page).toContain('must not be empty');
    expect(page).toContain('must be a number');
    expect(page).toContain('must be an upper-case currency code');
    expect(page).toContain('Line 2: must be an http(s) URL');
    expect(page).toContain('value="cheap"');
    expect((await mock.call('GET', '/api/v1/checkout')).json.result).toEqual([]);
  });

  it('tells the seller when a test webhook has nowhere to go', async () => {
    const cookie = await logIn();
    const created = await postForm(`${mock.url}/dashboard/checkouts`, FORM, cookie);
    const id = /checkouts\/([0-9a-f-]{36})/.exec(created.headers.get('location')!)![1]!;
    const sent = await postForm(`${mock.url}/dashboard/checkouts/${id}/test-webhook`, {}, cookie);
    expect(sent.headers.get('location')).toBe(`/dashboard/checkouts/${id}?notice=no-webhooks`);
    expect(await (await getPage(`${mock.url}${sent.headers.get('location')}`, cookie)).text()).toContain('has no webhook URLs');
  });
});
