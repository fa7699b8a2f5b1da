import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeWithBrowser, launchBrowser, logInToConsole } from '../../helpers/browser.js';
import type { TestReceiver } from '../../helpers/receiver.js';
import { removeTempDirs } from '../../helpers/temp-dir.js';
import { startWebhookSink, type WebhookSink } from '../../helpers/webhook-sink.js';
import { ADMIN_TOKEN, startConsoleReceiver } from '../../integration/console/console-harness.js';

let browser: Browser;
let receiver: TestReceiver & { rulesDir: string };
let sink: WebhookSink;

/** Dead letters of rule `kept` (in the rules) and of rule `removed` (no longer there), as a failed run leaves them. */
async function seedDead(ruleIds: string[]): Promise<void> {
  for (const [i, ruleId] of ruleIds.entries()) {
    await receiver.store.saveEvent({
      source: 'checkout', event: 'transfer:succeeded', transferId: `skip-${i}`, checkoutId: null, email: null, walletAddress: null, validation: 'valid',
      receivedAt: Date.now(), headers: {}, body: Buffer.from(`{"n":${i}}`),
      deliveries: [{ ruleId, ruleSetHash: 'seeded', body: null, contentType: 'application/json', deadReason: 'seeded' }],
    });
  }
}

describeWithBrowser('console: bulk retry of dead letters whose rule was removed', () => {
  beforeAll(async () => {
    sink = await startWebhookSink();
    receiver = await startConsoleReceiver([{ id: 'kept', url: sink.url }]);
    browser = await launchBrowser();
  });

  afterAll(async () => {
    await browser?.close();
    await receiver?.close();
    await sink?.close();
    removeTempDirs();
  });

  it('says before and after the job which dead letters it skips and why; a single retry of one is refused', async () => {
    await seedDead(['kept', 'removed', 'removed', 'kept', 'removed']);
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const dialogs: string[] = [];
    page.on('dialog', (dialog) => {
      dialogs.push(dialog.message());
      void dialog.accept();
    });
    try {
      await logInToConsole(page, receiver.url, ADMIN_TOKEN);
      await page.getByRole('link', { name: 'Dead letters' }).click();
      const rows = page.locator('tr[data-delivery-id]');
      await expect.poll(() => rows.count()).toBe(5);

      await page.getByRole('button', { name: 'Retry all dead letters' }).click();
      const panel = page.locator('section.job');
      await panel.locator('.badge', { hasText: 'done' }).waitFor();
      expect(dialogs).toHaveLength(1);
      expect(dialogs[0]).toContain('Retry 2 dead letters?');
      expect(dialogs[0]).toContain('Skipped: 3 of rule removed, no longer in the rule set');
      expect(await panel.locator('.job-counts').textContent()).toContain('2 of 2 processed');
      expect(await panel.locator('.job-skipped').textContent()).toContain('Skipped: 3 of rule removed, no longer in the rule set');
      await sink.waitFor(2);

      await page.getByRole('button', { name: 'Refresh' }).click();
      await expect.poll(() => rows.count()).toBe(3);
      await rows.first().getByRole('button', { name: 'Retry' }).click();
      const flash = page.locator('#flash.flash-error');
      await flash.waitFor();
      expect(await flash.textContent()).toMatch(/is not retried: rule "removed" is no longer in the rule set/);
      expect(await rows.count()).toBe(3);
    } finally {
      await page.close();
    }
  });
});
