import { afterAll, afterEach, expect, it } from 'vitest';
import { verifyHmacSha256Hex } from '../../../src/signing/hmac-sha256-hex.js';
import { describeWithBrowser, saveScreenshot } from '../../helpers/browser.js';
import { removeTempDirs } from '../../helpers/temp-dir.js';
import { startBrowserFlow, stopBrowserFlow } from './support/browser-flow.js';
import { MOCK_API_KEY, RULE_SECRET, RULE_SIGNATURE_HEADER, SOURCE_SECRET, readStore, sinkRequests } from './support/stack.js';

afterEach(stopBrowserFlow);
afterAll(() => removeTempDirs());

describeWithBrowser('mock checkout → hookrelay → rule → sink, bought in a real browser', () => {
  it('stores the event byte-exact, verifies its signature and forwards the same bytes signed by hookrelay', async () => {
    const { sink, receiver, mock, browser: launched } = await startBrowserFlow('forward-all');
    const checkout = await mock.createCheckout(receiver.url);
    expect(checkout.checkoutUrl).toBe(`${mock.url}/checkout/${checkout.id}`);

    // The buyer's side: open the link, fill the form, click Buy.
    const page = await launched.newPage({ viewport: { width: 720, height: 900 } });
    await page.goto(checkout.checkoutUrl);
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('Genesis Passes');
    await page.getByLabel('E-mail').fill('ada@example.com');
    await page.getByLabel('Wallet address (optional)').fill('0x2222222222222222222222222222222222222222');
    await page.getByLabel('Quantity').fill('3');
    await page.getByLabel('Payment method').selectOption('BUY_WITH_CRYPTO');
    await saveScreenshot(page, 'checkout-flow-buyer-page');
    await page.getByRole('button', { name: 'Buy' }).click();
    await page.getByText('Payment complete').waitFor();
    const transferId = (await page.getByTestId('transfer-id').textContent())!.trim();
    await saveScreenshot(page, 'checkout-flow-buyer-success');

    // The mock sent the webhook before rendering the success page, and hookrelay accepted it.
    const deliveries = await mock.deliveries(checkout.id);
    expect(deliveries).toHaveLength(1);
    const delivery = deliveries[0]!;
    expect(delivery).toMatchObject({
      transferId,
      kind: 'purchase',
      url: `${receiver.url}/webhooks/checkout`,
      signature: 'valid',
      status: 200,
      ok: true,
      error: null,
      attempts: 1,
    });
    const sentBytes = Buffer.from(delivery.body, 'utf8');
    expect(JSON.parse(delivery.body)).toMatchObject({
      event: 'transfer:succeeded',
      result: {
        id: transferId,
        checkoutId: checkout.id,
        email: 'ada@example.com',
        walletAddress: '0x2222222222222222222222222222222222222222',
        walletType: 'EXTERNAL',
        quantity: 3,
        paymentMethod: 'BUY_WITH_CRYPTO',
      },
    });

    // The rule forwarded the exact bytes, signed with the rule's secret.
    await sink.waitFor(1, 10_000);
    const forwarded = sinkRequests(sink, '/all');
    expect(forwarded).toHaveLength(1);
    expect(forwarded[0]!.method).toBe('POST');
    expect(forwarded[0]!.rawBody.equals(sentBytes)).toBe(true);
    expect(forwarded[0]!.headers['content-type']).toMatch(/^application\/json/);
    const hookrelaySignature = String(forwarded[0]!.headers[RULE_SIGNATURE_HEADER]);
    expect(verifyHmacSha256Hex([RULE_SECRET], forwarded[0]!.rawBody, hookrelaySignature)).toBe(true);
    expect(verifyHmacSha256Hex([SOURCE_SECRET], forwarded[0]!.rawBody, hookrelaySignature)).toBe(false);
    expect(forwarded[0]!.headers['webhook-id']).toEqual(expect.any(String));

    // The seller's side: the dashboard lists the delivery with hookrelay's 200.
    await page.goto(`${mock.url}/dashboard`);
    await page.getByLabel('API key').fill(MOCK_API_KEY);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('heading', { name: 'Checkouts' }).waitFor();
    await page.goto(`${mock.url}/dashboard/checkouts/${checkout.id}`);
    const row = page.getByTestId('delivery-row');
    expect(await row.count()).toBe(1);
    expect(await row.locator('td').nth(3).textContent()).toBe('200');
    await saveScreenshot(page, 'checkout-flow-dashboard');
    await page.close();

    // What hookrelay stored, read from its database after a graceful stop.
    expect(await receiver.stop()).toBe(0);
    const store = await readStore(receiver.dataDir);
    expect(store.events).toHaveLength(1);
    expect(store.events[0]).toMatchObject({
      source: 'checkout',
      event: 'transfer:succeeded',
      transferId: transferId,
      checkoutId: checkout.id,
      email: 'ada@example.com',
      validation: 'valid',
      receivedCount: 1,
    });
    const stored = store.getEvent(store.events[0]!.id);
    expect(stored.body.equals(sentBytes)).toBe(true);
    const storedSignature = stored.headers['x-service-signature'];
    expect(storedSignature).toEqual(expect.any(String));
    expect(verifyHmacSha256Hex([SOURCE_SECRET], stored.body, storedSignature!)).toBe(true);
    expect(store.deliveries).toHaveLength(1);
    expect(store.deliveries[0]).toMatchObject({ eventId: stored.id, ruleId: 'forward-all', state: 'delivered', attempts: 1, lastStatus: 200 });
  });
});
