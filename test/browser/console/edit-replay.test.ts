import type { Browser, Page } from 'playwright-core';
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
let bigSink: WebhookSink;

beforeAll(async () => {
  [browser, sink, bigSink] = await Promise.all([launchBrowser(), startWebhookSink(), startWebhookSink()]);
  receiver = await startConsoleReceiver([
    { id: 'fulfilment', url: sink.url },
    { id: 'big', url: bigSink.url, extra: 'where:\n  result.quantity: { $gt: 100 }\n' },
  ]);
});

afterAll(async () => {
  await browser?.close();
  await receiver?.close();
  await sink?.close();
  await bigSink?.close();
  removeTempDirs();
});

const logIn = (page: Page): Promise<void> => logInToConsole(page, receiver.url, ADMIN_TOKEN);

/** Logs in, opens the event's page and unfolds its edit and replay form. */
async function openEditForm(page: Page, id: number): Promise<void> {
  await logIn(page);
  await page.goto(`${receiver.url}/console#/events/${id}`);
  await page.locator('#edit-replay > summary').click();
}

describeWithBrowser('console: edit and replay with a diff, and replay by routing mode', () => {
  it('edits the body with schema checks as you type, shows the diff, sends through a chosen rule; the original stays as it was', async () => {
    const body = sampleTransferSucceeded({ email: 'qa@example.com', quantity: 1 });
    const reply = await postSigned(receiver.webhookUrl(), body, TEST_SECRET);
    const id = reply.json.id as number;
    await sink.waitFor(1);
    const originalBytes = (await receiver.store.getEvent(id))!.body;

    const page = await browser.newPage();
    try {
      await openEditForm(page, id);
      const editor = page.locator('#edit-body');
      await editor.waitFor();
      await page.locator('#edit-check', { hasText: 'Valid against the event schema.' }).waitFor();

      // A body that fails the schema: refused until marked meant-to-be-invalid.
      await editor.fill(JSON.stringify({ ...body, result: { ...body.result, quantity: 'many' } }, null, 2));
      await page.locator('#edit-check', { hasText: 'Fails the event schema' }).waitFor();
      await expect.poll(() => page.locator('#edit-send').isDisabled()).toBe(true);
      await page.locator('#edit-meant-invalid').check();
      await expect.poll(() => page.locator('#edit-send').isDisabled()).toBe(false);
      await page.locator('#edit-meant-invalid').uncheck();

      // A valid edit: its diff against the stored original, then through one rule that does not match.
      const edited = JSON.stringify({ ...body, result: { ...body.result, quantity: 7 } }, null, 2);
      await editor.fill(edited);
      await page.locator('#edit-diff li', { hasText: 'result.quantity: 1 → 7' }).waitFor();
      await page.locator('#edit-target').selectOption('rule:big');
      await page.locator('#edit-check', { hasText: "filter does not match the edited body" }).waitFor();
      await expect.poll(() => page.locator('#edit-send').isDisabled()).toBe(false);
      await saveScreenshot(page, 'console-edit-replay');
      await page.locator('#edit-send').click();
      await page.locator('#edit-copy-link').waitFor();

      const [sent] = await bigSink.waitFor(1);
      expect(sent!.rawBody.toString()).toBe(edited);
      const copyId = Number((await page.locator('#edit-copy-link').textContent())!.slice(1));
      expect(await receiver.store.getEvent(copyId)).toMatchObject({ edit: { editedFrom: id, via: 'console', number: 1 }, transferId: body.result.id });
      expect((await receiver.store.getEvent(id))!.body.equals(originalBytes)).toBe(true);
      expect((await receiver.store.listDeliveries({ eventId: id }, { limit: 10 })).items).toHaveLength(1);

      // The copy's page links back to its original, and the events list marks it as a copy.
      await page.locator('#edit-copy-link').click();
      await page.locator('#edited-from', { hasText: `#${id}` }).waitFor();
      await page.goto(`${receiver.url}/console#/events`);
      expect(await page.locator(`tr[data-event-id="${copyId}"] .badge.edited`).textContent()).toBe(`edited #${id}`);
      expect(await page.locator(`tr[data-event-id="${id}"] .badge.edited`).count()).toBe(0);

      // Replay of the original by routing mode, as a dry run: where it would go, nothing sent.
      await page.goto(`${receiver.url}/console#/events/${id}`);
      await page.locator('#replay-route').selectOption('original');
      await page.locator('#replay-dry-run').check();
      await page.locator('#replay-all').click();
      const outcome = page.locator('#replay-result');
      await outcome.getByText(`Dry run through rule set ${receiver.rules.current().hash}: nothing was sent.`).waitFor();
      await outcome.getByText(`fulfilment → POST ${sink.url}`).waitFor();
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(sink.received).toHaveLength(1);
    } finally {
      await page.close();
    }
  });

  it('shows the body indented; sent unedited it is the stored bytes exactly, edited it is the text as shown, with its diff', async () => {
    // Spacing and key order that indenting changes: sent unedited, none of it may be lost.
    const body = sampleTransferSucceeded({ email: 'exact@example.com', quantity: 1 });
    const raw = Buffer.from(JSON.stringify(body).replace('"event":', '"event" :  ').replace(/,"quantity":/, ', "quantity":'));
    // Counted before the post: the delivery may reach the sink before the acknowledgement reaches the test.
    const delivered = sink.received.length;
    const { id } = (await postSigned(receiver.webhookUrl(), raw, TEST_SECRET)).json as { id: number };
    await sink.waitFor(delivered + 1);
    const page = await browser.newPage();
    try {
      await openEditForm(page, id);
      const editor = page.locator('#edit-body');
      const indented = JSON.stringify(JSON.parse(raw.toString()), null, 2);
      expect(await editor.inputValue()).toBe(indented);
      expect(Number(await editor.getAttribute('rows'))).toBeGreaterThan(14);
      expect(await page.locator('#edit-exact').textContent()).toContain(`the stored ${raw.length} bytes are sent exactly as received`);
      await page.locator('#edit-diff', { hasText: 'No change from the stored original.' }).waitFor();

      await page.locator('#edit-target').selectOption('rule:big');
      await expect.poll(() => page.locator('#edit-send').isDisabled()).toBe(false);
      const before = bigSink.received.length;
      await page.locator('#edit-send').click();
      await page.locator('#edit-copy-link').waitFor();
      const sent = (await bigSink.waitFor(before + 1)).at(-1)!;
      expect(sent.rawBody.equals(raw)).toBe(true);
      const copyId = Number((await page.locator('#edit-copy-link').textContent())!.slice(1));
      expect((await receiver.store.getEvent(copyId))!.body.equals(raw)).toBe(true);

      // An edit is sent as the text shown, and the diff says what changed.
      const edited = indented.replace('"quantity": 1', '"quantity": 3');
      await page.locator('#edit-body').fill(edited);
      expect(await page.locator('#edit-exact').textContent()).toContain('Edited: the text above is stored and sent as it is');
      await page.locator('#edit-diff li', { hasText: 'result.quantity: 1 → 3' }).waitFor();
      await page.locator('#edit-target').selectOption('rule:big');
      await expect.poll(() => page.locator('#edit-send').isDisabled()).toBe(false);
      await page.locator('#edit-send').click();
      // The link names the first copy until the second is stored.
      await expect.poll(() => page.locator('#edit-copy-link').textContent()).not.toBe(`#${copyId}`);
      expect((await bigSink.waitFor(before + 2, 15_000)).at(-1)!.rawBody.toString()).toBe(edited);
    } finally {
      await page.close();
    }
  });

  it('says that an event stored before rule sets were kept has no known original routing, and offers current', async () => {
    const body = sampleTransferSucceeded();
    const { id } = await receiver.store.saveEvent({
      source: 'checkout', event: 'transfer:succeeded', transferId: body.result.id, checkoutId: null, email: null, walletAddress: null,
      validation: 'valid', receivedAt: Date.now(), headers: {}, body: Buffer.from(JSON.stringify(body)),
    });
    const page = await browser.newPage();
    try {
      await logIn(page);
      await page.goto(`${receiver.url}/console#/events/${id}`);
      await page.getByText('unknown (stored before rule sets were kept)').waitFor();
      await page.locator('#replay-route').selectOption('original');
      await page.locator('#replay-all').click();
      const outcome = page.locator('#replay-result');
      await outcome.getByRole('alert').getByText(/rules that routed it are unknown/).waitFor();
      expect(await outcome.locator('p.muted').textContent()).toBe('Choose route “current” to replay it through the rules as they are now.');
      expect((await receiver.store.listDeliveries({ eventId: id }, { limit: 10 })).items).toEqual([]);
    } finally {
      await page.close();
    }
  });
});
