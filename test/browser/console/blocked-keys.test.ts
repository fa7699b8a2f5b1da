import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { sampleTransferSucceeded } from '../../../src/samples/transfer-succeeded.js';
import { describeWithBrowser, launchBrowser } from '../../helpers/browser.js';
import { postSigned } from '../../helpers/http.js';
import { TEST_SECRET, type TestReceiver } from '../../helpers/receiver.js';
import { eventually } from '../../helpers/rules.js';
import { removeTempDirs } from '../../helpers/temp-dir.js';
import { startWebhookSink, type WebhookSink } from '../../helpers/webhook-sink.js';
import { ADMIN_TOKEN, startConsoleReceiver } from '../../integration/console/console-harness.js';

let browser: Browser;
let receiver: TestReceiver & { rulesDir: string };
let sink: WebhookSink;

describeWithBrowser('console: blocked keys of an ordered rule', () => {
  beforeAll(async () => {
    sink = await startWebhookSink(() => 503);
    receiver = await startConsoleReceiver([
      { id: 'in-order', url: sink.url, extra: "order:\n  key: result.checkoutId\nretry:\n  schedule: [0s, 1h]\n" },
    ]);
    browser = await launchBrowser();
  });

  afterAll(async () => {
    await browser?.close();
    await receiver?.close();
    await sink?.close();
    removeTempDirs();
  });

  it('lists the blocked key with its failing head and the deliveries waiting behind it', async () => {
    const first = sampleTransferSucceeded();
    const key = String(first.result.checkoutId);
    for (const body of [first, sampleTransferSucceeded({ checkoutId: key }), sampleTransferSucceeded({ checkoutId: key })]) {
      expect((await postSigned(receiver.webhookUrl(), body, TEST_SECRET)).status).toBe(200);
    }
    await eventually(async () => (await receiver.store.listBlockedKeys('in-order', 10)).length === 1, 10_000, 'the key blocked');
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    try {
      await page.goto(`${receiver.url}/console`);
      await page.getByLabel('Admin token').fill(ADMIN_TOKEN);
      await page.getByRole('button', { name: 'Log in' }).click();
      await page.getByRole('heading', { name: 'Events' }).waitFor();
      await page.getByRole('link', { name: 'Rules' }).click();
      const row = page.locator(`.blocked-keys[data-rule-id="in-order"] tr[data-key="${key}"]`);
      await row.waitFor();
      expect(await row.locator('td[data-label="Waiting"]').textContent()).toBe('2');
      expect(await row.locator('td[data-label="Attempts"]').textContent()).toBe('1');
      expect(await row.locator('td[data-label="Last answer"]').textContent()).toBe('HTTP 503');
      expect(sink.received).toHaveLength(1);
    } finally {
      await page.close();
    }
  });
});
