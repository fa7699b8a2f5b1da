import { afterAll, afterEach, expect, it } from 'vitest';
import { describeWithBrowser, saveScreenshot } from '../../helpers/browser.js';
import { removeTempDirs } from '../../helpers/temp-dir.js';
import { startBrowserFlow, stopBrowserFlow } from './support/browser-flow.js';
import { readStore } from './support/stack.js';

afterEach(stopBrowserFlow);
afterAll(() => removeTempDirs());

describeWithBrowser('one-time checkout link bought twice', () => {
  it('refuses the second purchase from the browser and the hook with 410, and hookrelay stores one event', async () => {
    const { sink, receiver, mock, browser: launched } = await startBrowserFlow('all-purchases');
    const checkout = await mock.createCheckout(receiver.url, { oneTimeLink: true });

    // Two buyers open the same link; both see the form.
    const context = await launched.newContext();
    const [first, second] = await Promise.all([context.newPage(), context.newPage()]);
    for (const page of [first, second]) {
      const response = await page.goto(checkout.checkoutUrl);
      expect(response?.status()).toBe(200);
    }
    await first.getByLabel('E-mail').fill('first@example.com');
    await first.getByRole('button', { name: 'Buy' }).click();
    await first.getByText('Payment complete').waitFor();
    const transferId = (await first.getByTestId('transfer-id').textContent())!.trim();

    // The second buyer clicks Buy on the form they already had open.
    await second.getByLabel('E-mail').fill('second@example.com');
    const [refused] = await Promise.all([second.waitForResponse((r) => r.request().method() === 'POST'), second.getByRole('button', { name: 'Buy' }).click()]);
    expect(refused.status()).toBe(410);
    await second.getByText('This checkout link was already used').waitFor();
    await saveScreenshot(second, 'checkout-flow-one-time-gone');

    // Opening the link again, and the automation hook, are refused too.
    expect((await second.goto(checkout.checkoutUrl))?.status()).toBe(410);
    const hook = await mock.call('POST', `/mock/checkout/${checkout.id}/purchase`, { email: 'third@example.com' });
    expect(hook.status).toBe(410);
    expect(hook.json.error.code).toBe('gone');
    await context.close();

    const transfers = await mock.transfers(checkout.id);
    expect(transfers.map((t) => t.id)).toEqual([transferId]);
    const deliveries = await mock.deliveries(checkout.id);
    expect(deliveries).toHaveLength(1);
    expect(deliveries[0]).toMatchObject({ transferId, status: 200, ok: true });

    const [forwarded] = await sink.waitFor(1, 10_000);
    expect(JSON.parse(forwarded!.rawBody.toString()).result).toMatchObject({ id: transferId, email: 'first@example.com' });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(sink.received).toHaveLength(1);

    expect(await receiver.stop()).toBe(0);
    const store = await readStore(receiver.dataDir);
    expect(store.events).toHaveLength(1);
    expect(store.events[0]).toMatchObject({ transferId: transferId, checkoutId: checkout.id, email: 'first@example.com', receivedCount: 1 });
    expect(store.deliveries).toHaveLength(1);
  });
});
