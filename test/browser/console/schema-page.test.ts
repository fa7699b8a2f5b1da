import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachBackend } from '../../helpers/backends.js';
import { describeWithBrowser, launchBrowser, logInToConsole, saveScreenshot } from '../../helpers/browser.js';
import { startTestReceiver, TEST_SECRET } from '../../helpers/receiver.js';
import { eventually, rulesDirWith } from '../../helpers/rules.js';
import { SAMPLE_CHECKOUT } from '../../helpers/sample-checkout.js';
import { removeTempDirs } from '../../helpers/temp-dir.js';
import { startMock } from '../../integration/mock-checkout/support/mock-harness.js';

const ADMIN_TOKEN = 'schema-page-admin-token-0123456789abcdef';
let browser: Browser;

beforeAll(async () => {
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  removeTempDirs();
});

describeWithBrowser('console: schema page', () => {
  describeEachBackend('drift from the mock checkout', (backend) => {
    it('shows the drift with a link to the first event that showed it, and the observed fields', async () => {
      const app = await startTestReceiver({
        ...(await backend.storage()),
        admin: { token: ADMIN_TOKEN },
        rulesDir: rulesDirWith({ 'r.yaml': 'id: no-gift\non: [transfer:succeeded]\nwhere:\n  result.giftMessage: { $exists: false }\nto:\n  url: http://127.0.0.1:9/\n' }),
        schema: { intervalMs: 100 },
      });
      const mock = await startMock({ webhookSecret: TEST_SECRET });
      const page = await browser.newPage();
      try {
        await eventually(() => app.store.loadSchemaLearning(), 20_000, 'the learner started');
        const created = await mock.call('POST', '/api/v1/checkout', { ...SAMPLE_CHECKOUT, webhookUrls: [app.webhookUrl()] });
        const id = created.json.result.id as string;
        await mock.call('POST', `/mock/checkout/${id}/purchase`, {});
        const drifted = await mock.call('POST', `/mock/checkout/${id}/purchase`, { drift: 'new-field' });
        expect(drifted.json.deliveries[0].status).toBe(200);
        const [drift] = await eventually(async () => {
          const list = await app.store.listDrifts({ limit: 10 });
          return list.length > 0 ? list : null;
        }, 20_000, 'the drift recorded');

        await logInToConsole(page, app.adminUrl, ADMIN_TOKEN);
        await page.getByRole('link', { name: 'Schema' }).click();
        await page.getByRole('heading', { name: 'Drifts (1)' }).waitFor();
        const row = page.locator(`tr[data-drift-id="${drift!.id}"]`);
        const text = await row.textContent();
        expect(text).toContain('result.giftMessage');
        expect(text).toContain('no-gift');
        expect(await row.getAttribute('data-kind')).toBe('field_added');
        await page.getByRole('heading', { name: 'checkout transfer:succeeded' }).waitFor();
        await expect(page.locator('tr[data-path="result.email"]').textContent()).resolves.toContain('***@example.com');
        await saveScreenshot(page, `console-schema-drift-${backend.name}`);
        await row.getByRole('link', { name: `#${drift!.eventId}` }).click();
        await page.waitForURL(new RegExp(`#/events/${drift!.eventId}$`));
      } finally {
        await page.close();
        await mock.close();
        await app.close();
      }
    }, 90_000);
  });
});
