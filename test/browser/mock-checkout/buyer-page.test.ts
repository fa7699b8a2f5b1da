import type { Browser } from 'playwright-core';
import { expect, it } from 'vitest';
import { verifyHmacSha256Hex } from '../../../src/signing/hmac-sha256-hex.js';
import { describeWithBrowser, saveScreenshot } from '../../helpers/browser.js';
import { browserStackForFile } from './browser-stack.js';
import { SAMPLE_CHECKOUT, type RunningMock } from '../../integration/mock-checkout/support/mock-harness.js';
import type { WebhookSink } from '../../helpers/webhook-sink.js';

let browser: Browser;
let mock: RunningMock;
let sink: WebhookSink;

browserStackForFile((stack) => ({ browser, mock, sink } = stack));

async function createCheckout(extra: Record<string, unknown> = {}) {
  const created = await mock.call('POST', '/api/v1/checkout', { ...SAMPLE_CHECKOUT, webhookUrls: [sink.url], ...extra });
  expect(created.status).toBe(200);
  return created.json as { checkoutUrl: string; result: { id: string; webhookSecret: string } };
}

describeWithBrowser('buyer page in a browser', () => {
  it('fills the form, clicks Buy, shows the success page, and the sink gets a valid signed webhook', async () => {
    const { checkoutUrl, result } = await createCheckout();
    const page = await browser.newPage({ viewport: { width: 720, height: 900 } });
    try {
      await page.goto(checkoutUrl);
      await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('Genesis Passes');
      await expect(page.getByTestId('price').textContent()).resolves.toBe('0.5 MATIC');
      await page.getByLabel('E-mail').fill('linus@example.com');
      await page.getByLabel('Wallet address (optional)').fill('0x1111111111111111111111111111111111111111');
      await page.getByLabel('Quantity').fill('2');
      await page.getByLabel('Payment method').selectOption('BUY_WITH_CRYPTO');
      await saveScreenshot(page, 'mock-buyer-page');

      await page.getByRole('button', { name: 'Buy' }).click();
      await page.getByText('Payment complete').waitFor();
      const transferId = await page.getByTestId('transfer-id').textContent();
      await saveScreenshot(page, 'mock-buyer-success');
      expect(await page.getByRole('link', { name: 'Continue' }).getAttribute('href')).toBe('https://shop.example.com/thanks');

      const [webhook] = await sink.waitFor(1);
      const signature = String(webhook!.headers['x-service-signature']);
      expect(verifyHmacSha256Hex([result.webhookSecret], webhook!.rawBody, signature)).toBe(true);
      const body = JSON.parse(webhook!.rawBody.toString('utf8'));
      expect(body).toMatchObject({
        event: 'transfer:succeeded',
        result: {
          id: transferId,
          checkoutId: result.id,
          email: 'linus@example.com',
          walletAddress: '0x1111111111111111111111111111111111111111',
          walletType: 'EXTERNAL',
          quantity: 2,
          paymentMethod: 'BUY_WITH_CRYPTO',
        },
      });
    } finally {
      await page.close();
    }
  });

  it('shows validation messages next to the fields and keeps what the buyer typed', async () => {
    const { checkoutUrl } = await createCheckout();
    const page = await browser.newPage();
    try {
      await page.goto(checkoutUrl);
      await page.getByLabel('E-mail').fill('not-an-email');
      await page.getByLabel('Quantity').fill('0');
      await page.getByRole('button', { name: 'Buy' }).click();
      await page.getByText('enter your e-mail address').waitFor();
      expect(await page.getByLabel('E-mail').inputValue()).toBe('not-an-email');
      await page.getByText('must be at least 1').waitFor();
      expect(await page.getByRole('alert').count()).toBe(2);
      await saveScreenshot(page, 'mock-buyer-invalid');
    } finally {
      await page.close();
    }
  });

  it('shows the "already used" page on a second visit to a bought one-time link', async () => {
    const { checkoutUrl } = await createCheckout({ oneTimeLink: true, webhookUrls: [] });
    const page = await browser.newPage();
    try {
      await page.goto(checkoutUrl);
      await page.getByLabel('E-mail').fill('first@example.com');
      await page.getByRole('button', { name: 'Buy' }).click();
      await page.getByText('Payment complete').waitFor();
      const again = await page.goto(checkoutUrl);
      expect(again?.status()).toBe(410);
      await page.getByText('This checkout link was already used').waitFor();
      await saveScreenshot(page, 'mock-buyer-gone');
    } finally {
      await page.close();
    }
  });
});
