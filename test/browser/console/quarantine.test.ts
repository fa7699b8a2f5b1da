import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { sampleTransferSucceeded } from '../../../src/samples/transfer-succeeded.js';
import { describeWithBrowser, launchBrowser, logInToConsole } from '../../helpers/browser.js';
import { postSigned, send } from '../../helpers/http.js';
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

afterAll(async () => {
  await browser?.close();
  await receiver?.close();
  await sink?.close();
  removeTempDirs();
});

describeWithBrowser('console: quarantined events', () => {
  it('lists a body kept after a 422 as held, shows its issues, and releases it once', async () => {
    const sample = sampleTransferSucceeded();
    const drifted = { ...sample, result: { ...sample.result, totalPriceUsd: '49.02' } };
    expect((await postSigned(receiver.webhookUrl(), drifted, TEST_SECRET)).status).toBe(422);
    const listed = await send(`${receiver.url}/admin/api/events?quarantine=held`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    const id = listed.json.items[0].id as number;

    const page: Page = await (await browser.newContext({ viewport: { width: 1400, height: 900 } })).newPage();
    await logInToConsole(page, receiver.url, ADMIN_TOKEN);
    const row = page.locator(`tr[data-event-id="${id}"]`);
    await row.waitFor();
    expect(await row.locator('.badge.quarantine-held').textContent()).toBe('held');

    await row.locator('a.event-link').click();
    await page.locator('#quarantine-issues').waitFor();
    expect(await page.locator('#quarantine-issues').textContent()).toContain('result.totalPriceUsd');
    await page.locator('#release').click();
    await page.locator('#release-result').getByText('still fails the event schema').waitFor();
    expect(sink.received).toHaveLength(0);
    await page.locator('#release-force').check();
    await page.locator('#release').click();
    await page.getByText('Released: 1 delivery queued.').waitFor();
    await sink.waitFor(1);

    const again = await send(`${receiver.url}/admin/api/events/${id}/release`, {
      method: 'POST', headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify({ force: true }),
    });
    expect(again.status).toBe(409);
    const detail = await send(`${receiver.url}/admin/api/events/${id}`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(detail.json.event.release).toMatchObject({ releasedBy: 'console', forced: true });
    expect(sink.received).toHaveLength(1);
  });
});
