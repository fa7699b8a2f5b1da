import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sampleTransferSucceeded } from '../../../src/samples/transfer-succeeded.js';
import { launchBrowser, saveScreenshot } from '../../helpers/browser.js';
import { postSigned } from '../../helpers/http.js';
import { TEST_SECRET, type TestReceiver } from '../../helpers/receiver.js';
import { removeTempDirs } from '../../helpers/temp-dir.js';
import { startWebhookSink, type WebhookSink } from '../../helpers/webhook-sink.js';
import { ADMIN_TOKEN, ruleYaml, startConsoleReceiver } from '../../integration/console/console-harness.js';

let browser: Browser;
let receiver: TestReceiver & { rulesDir: string };
let sink: WebhookSink;
let eventId: number;

beforeAll(async () => {
  [browser, sink] = await Promise.all([launchBrowser(), startWebhookSink()]);
  receiver = await startConsoleReceiver([
    { id: 'fulfilment', url: sink.url, extra: 'transform: \'{ "email": result.email }\'\n' },
    {
      id: 'crypto-only',
      url: `${sink.url}/crypto`,
      extra: 'where:\n  result.paymentMethod: BUY_WITH_CRYPTO\n  result.quantity: { $gte: 5 }\n  result.couponCode: { $exists: true }\n  $or:\n    - result.email: { $regex: "^vip" }\n    - result.quantity: 2\n',
    },
  ]);
  const reply = await postSigned(receiver.webhookUrl(), sampleTransferSucceeded({ email: 'ann@example.com', quantity: 2 }), TEST_SECRET);
  expect(reply.status, reply.text).toBe(200);
  eventId = reply.json.id;
  await sink.waitFor(1);
});

afterAll(async () => {
  await browser?.close();
  await receiver?.close();
  await sink?.close();
  removeTempDirs();
});

async function openEventPage(page: Page): Promise<void> {
  await page.goto(`${receiver.url}/console`);
  await page.getByLabel('Admin token').fill(ADMIN_TOKEN);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.getByRole('heading', { name: 'Events' }).waitFor();
  await page.goto(`${receiver.url}/console#/events/${eventId}`);
  await page.locator('#explain-run').waitFor();
}

/** The text of each top-level clause of one rule, with its verdict. */
async function topLevelClauses(page: Page, ruleId: string): Promise<{ pass: string | null; text: string }[]> {
  const items = page.locator(`#explain-result details[data-rule-id="${ruleId}"] > ul.clauses > li`);
  return items.evaluateAll((nodes) =>
    nodes.map((node) => ({
      pass: node.getAttribute('data-pass'),
      text: [...node.children].filter((child) => child.tagName === 'SPAN').map((span) => span.textContent).join(' '),
    })),
  );
}

describe('console: the explain panel on the event page', { timeout: 60_000 }, () => {
  it('lists every failing clause with the value found, the nested branches, and what the matching rule would send', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
    try {
      await openEventPage(page);
      await page.locator('#explain-run').click();
      const crypto = page.locator('#explain-result details[data-rule-id="crypto-only"]');
      await crypto.waitFor();
      expect(await crypto.getAttribute('data-matched')).toBe('false');
      await expect.poll(() => crypto.locator('summary').textContent()).toContain('3 failing clauses');

      expect(await topLevelClauses(page, 'crypto-only')).toEqual([
        { pass: 'true', text: '✓ event $in ["transfer:succeeded"] found "transfer:succeeded"' },
        { pass: 'true', text: '✓ source any found "checkout"' },
        { pass: 'false', text: '✗ result.paymentMethod $eq "BUY_WITH_CRYPTO" found "BUY_WITH_CARD"' },
        { pass: 'false', text: '✗ result.quantity $gte 5 found 2' },
        { pass: 'false', text: '✗ result.couponCode $exists true absent' },
        { pass: 'true', text: '✓ $or' },
      ]);
      const branches = crypto.locator('> ul.clauses > li:last-child > ul.clauses > li');
      expect(await branches.evaluateAll((nodes) => nodes.map((node) => node.getAttribute('data-pass')))).toEqual(['false', 'true']);

      const fulfilment = page.locator('#explain-result details[data-rule-id="fulfilment"]');
      expect(await fulfilment.getAttribute('data-matched')).toBe('true');
      expect(await fulfilment.locator('.explain-body').textContent()).toBe('{"email":"ann@example.com"}');
      expect(await fulfilment.locator('.explain-request').textContent()).toContain(`POST ${sink.url}`);
      expect(await fulfilment.textContent()).toContain('The network guard allows the destination (127.0.0.1).');
      expect(await page.locator('#explain-result').textContent()).toContain(receiver.rules.current().hash);
      await saveScreenshot(page, 'console-explain-panel');
    } finally {
      await page.close();
    }
  });

  it('says when the stored deliveries were planned under another rule set, and fits a phone screen', async () => {
    writeFileSync(join(receiver.rulesDir, 'fulfilment.yaml'), ruleYaml({ id: 'fulfilment', url: sink.url, extra: 'enabled: false\n' }));
    await receiver.rules.check();
    const page = await browser.newPage({ viewport: { width: 390, height: 844 } });
    try {
      await openEventPage(page);
      await page.locator('#explain-run').click();
      const note = page.getByRole('note');
      await note.waitFor();
      expect(await note.textContent()).toContain(`not the current ${receiver.rules.current().hash}`);
      const fulfilment = page.locator('#explain-result details[data-rule-id="fulfilment"]');
      expect(await fulfilment.locator('summary').textContent()).toContain('disabled');
      expect(await fulfilment.locator('p').first().textContent()).toBe('the rule is disabled; it would match if it were enabled');
      expect(await page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth')).toBeLessThanOrEqual(0);
    } finally {
      await page.close();
    }
  });
});
