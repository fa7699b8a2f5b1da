import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { sampleTransferSucceeded } from '../../../src/samples/transfer-succeeded.js';
import { describeWithBrowser, launchBrowser, logInToConsole, saveScreenshot } from '../../helpers/browser.js';
import { postSigned } from '../../helpers/http.js';
import { TEST_SECRET, type TestReceiver } from '../../helpers/receiver.js';
import { removeTempDirs } from '../../helpers/temp-dir.js';
import { startWebhookSink, type WebhookSink } from '../../helpers/webhook-sink.js';
import { ADMIN_TOKEN, startConsoleReceiver } from '../../integration/console/console-harness.js';

let browser: Browser;
let receiver: TestReceiver & { rulesDir: string };
let sink: WebhookSink;

beforeAll(async () => {
  [browser, sink] = await Promise.all([launchBrowser(), startWebhookSink()]);
  receiver = await startConsoleReceiver([{ id: 'fulfilment', url: sink.url }]);
});

/** A page of its own browser context (no session yet) that may read what the page copied. */
async function openPage(): Promise<{ page: Page; context: BrowserContext }> {
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: receiver.url });
  return { page: await context.newPage(), context };
}

afterAll(async () => {
  await browser?.close();
  await receiver?.close();
  await sink?.close();
  removeTempDirs();
});

const logIn = (page: Page): Promise<void> => logInToConsole(page, receiver.url, ADMIN_TOKEN);

/** What the page last put on the clipboard. */
const clipboardText = (page: Page): Promise<string> => page.evaluate<string>('navigator.clipboard.readText()');

const cellOf = (page: Page, id: number, label: string) => page.locator(`tr[data-event-id="${id}"] td[data-label="${label}"]`);

describeWithBrowser('console: what a seller scans the events list for, and the event page', () => {
  it('lists each event with its id and amount; ids cut to fit have a copy button that copies the whole id', async () => {
    const paidBody = sampleTransferSucceeded({ quantity: 2, unitPriceUsd: 52.175 });
    const paid = (await postSigned(receiver.webhookUrl(), paidBody, TEST_SECRET)).json.id as number;
    const other = (await postSigned(receiver.webhookUrl(), { event: 'order:noted', result: { id: 'no-amount' } }, TEST_SECRET)).json.id as number;
    const { page, context } = await openPage();
    try {
      await logIn(page);
      await page.locator(`tr[data-event-id="${other}"]`).waitFor();
      expect(await page.locator('table.data thead th').allTextContents()).toEqual(expect.arrayContaining(['ID', 'Amount']));
      expect((await page.locator('table.data thead th').allTextContents()).slice(0, 1)).toEqual(['ID']);
      expect(await cellOf(page, paid, 'Amount').textContent()).toBe('$104.37');
      expect(await cellOf(page, other, 'Amount').textContent()).toBe('–');
      expect(await cellOf(page, paid, 'ID').locator('a').textContent()).toBe(String(paid));

      // The event id, and a transfer id the column cuts short: each copied whole.
      await cellOf(page, paid, 'ID').getByRole('button', { name: 'Copy event id' }).click();
      await expect.poll(() => clipboardText(page)).toBe(String(paid));
      const transfer = cellOf(page, paid, 'Transfer id');
      const clip = transfer.locator('.clip');
      expect(await clip.evaluate((el) => el.scrollWidth > el.clientWidth)).toBe(true);
      await transfer.getByRole('button', { name: 'Copy transfer id' }).click();
      await expect.poll(() => clipboardText(page)).toBe(paidBody.result.id);
      expect(await transfer.getByRole('button', { name: 'Copy transfer id' }).getAttribute('data-copied')).toBe('yes');
      await cellOf(page, paid, 'Wallet').getByRole('button', { name: 'Copy wallet address' }).click();
      await expect.poll(() => clipboardText(page)).toBe(paidBody.result.walletAddress);
      await saveScreenshot(page, 'console-events-amount-id');
    } finally {
      await context.close();
    }
  });

  it('puts the body and explain above edit and replay, which stays folded until opened', async () => {
    const body = sampleTransferSucceeded();
    const id = (await postSigned(receiver.webhookUrl(), body, TEST_SECRET)).json.id as number;
    const { page, context } = await openPage();
    try {
      await logIn(page);
      await page.goto(`${receiver.url}/console#/events/${id}`);
      await page.locator('#event-body').waitFor();
      const top = async (selector: string) => (await page.locator(selector).first().boundingBox())!.y;
      const explain = page.getByRole('heading', { name: /^Explain/ });
      await explain.waitFor();
      const explainTop = (await explain.boundingBox())!.y;
      const bodyTop = await top('#event-body');
      const editTop = await top('#edit-replay');
      expect(explainTop).toBeLessThan(editTop);
      expect(bodyTop).toBeLessThan(editTop);
      expect(await page.locator('#edit-replay').getAttribute('open')).toBeNull();
      expect(await page.locator('#edit-body').isVisible()).toBe(false);
      // Folded, the edit form adds one line to the page, not the textarea and its checks.
      expect((await page.locator('#edit-replay').boundingBox())!.height).toBeLessThan(80);
      await page.getByRole('button', { name: 'Copy event id' }).click();
      await expect.poll(() => clipboardText(page)).toBe(String(id));
      await saveScreenshot(page, 'console-event-page-order');

      await page.locator('#edit-replay > summary').click();
      await page.locator('#edit-body').waitFor();
      await page.locator('#edit-check', { hasText: 'Valid against the event schema.' }).waitFor();
    } finally {
      await context.close();
    }
  });
});
