import type { Browser, Page } from 'playwright-core';
import { expect, it } from 'vitest';
import { verifyHmacSha256Hex } from '../../../src/signing/hmac-sha256-hex.js';
import { describeWithBrowser, saveScreenshot } from '../../helpers/browser.js';
import { browserStackForFile } from './browser-stack.js';
import { SAMPLE_CHECKOUT, TEST_API_KEY, type RunningMock } from '../../integration/mock-checkout/support/mock-harness.js';
import type { WebhookSink } from '../../helpers/webhook-sink.js';

let browser: Browser;
let mock: RunningMock;
let sink: WebhookSink;

browserStackForFile((stack) => ({ browser, mock, sink } = stack));

async function logIn(page: Page): Promise<void> {
  await page.goto(`${mock.url}/dashboard`);
  expect(new URL(page.url()).pathname).toBe('/dashboard/login');
  await page.getByLabel('API key').fill('wrong-key');
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.getByText('not the API key').waitFor();
  await page.getByLabel('API key').fill(TEST_API_KEY);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.getByRole('heading', { name: 'Checkouts' }).waitFor();
}

describeWithBrowser('dashboard in a browser', () => {
  it('logs in, creates and edits a checkout with webhook URLs, and sends a test webhook', async () => {
    // A checkout made through the API shows up too (and makes the list screenshot less empty).
    await mock.call('POST', '/api/v1/checkout', { ...SAMPLE_CHECKOUT, oneTimeLink: true });
    const page = await browser.newPage({ viewport: { width: 1100, height: 800 } });
    try {
      await logIn(page);
      await page.getByRole('link', { name: 'New checkout' }).click();
      await page.getByLabel('Collection title').fill('Founders Edition');
      await page.getByLabel('Contract address').fill('0x9f8e7d6c5b4a39281706f5e4d3c2b1a098765432');
      await page.getByLabel('Contract type').fill('ACME_NFT_DROP_V2');
      await page.getByLabel('Price').fill('12');
      await page.getByLabel('Currency').fill('USDC');
      await page.getByRole('button', { name: 'Create checkout' }).click();
      await page.getByText('Checkout created.').waitFor();
      const id = /\/dashboard\/checkouts\/([0-9a-f-]{36})/.exec(page.url())![1]!;

      // Edit: Advanced Options → Webhook URLs, one per line.
      await page.getByLabel('Price').fill('15');
      await page.getByLabel('Webhook URLs').fill(`${sink.url}\nnot a url`);
      await page.getByRole('button', { name: 'Save changes' }).click();
      await page.getByText('Line 2: must be an http(s) URL').waitFor();
      await page.getByLabel('Webhook URLs').fill(sink.url);
      await page.getByRole('button', { name: 'Save changes' }).click();
      await page.getByText('Changes saved.').waitFor();

      const stored = (await mock.call('GET', `/api/v1/checkout/${id}`)).json.result;
      expect(stored).toMatchObject({ collectionTitle: 'Founders Edition', priceValue: 15, priceCurrency: 'USDC', webhookUrls: [sink.url] });

      await page.getByRole('button', { name: 'Send test webhook' }).click();
      await page.getByText('Test webhook sent').waitFor();
      const [webhook] = await sink.waitFor(1);
      expect(verifyHmacSha256Hex([stored.webhookSecret], webhook!.rawBody, String(webhook!.headers['x-service-signature']))).toBe(true);
      const row = page.getByTestId('delivery-row');
      expect(await row.count()).toBe(1);
      expect(await row.locator('td').nth(3).textContent()).toBe('200');
      await saveScreenshot(page, 'mock-dashboard-checkout');

      await page.getByRole('link', { name: 'Mock checkout' }).click();
      await page.getByRole('link', { name: 'Founders Edition' }).waitFor();
      await saveScreenshot(page, 'mock-dashboard-list');
    } finally {
      await page.close();
    }
  });

  it('deletes a checkout from its page', async () => {
    const created = await mock.call('POST', '/api/v1/checkout', { ...SAMPLE_CHECKOUT, collectionTitle: 'To Delete' });
    const page = await browser.newPage();
    try {
      await logIn(page);
      await page.goto(`${mock.url}/dashboard/checkouts/${created.json.result.id}`);
      await page.getByRole('button', { name: 'Delete checkout' }).click();
      await page.getByText('Checkout deleted.').waitFor();
      expect(await page.getByRole('link', { name: 'To Delete' }).count()).toBe(0);
      expect((await mock.call('GET', `/api/v1/checkout/${created.json.result.id}`)).status).toBe(404);
    } finally {
      await page.close();
    }
  });
});
