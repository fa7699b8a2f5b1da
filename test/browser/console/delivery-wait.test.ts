import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { sampleTransferSucceeded } from '../../../src/samples/transfer-succeeded.js';
import { describeWithBrowser, launchBrowser, logInToConsole } from '../../helpers/browser.js';
import { postSigned, send } from '../../helpers/http.js';
import { startTestReceiver, TEST_SECRET, type TestReceiver } from '../../helpers/receiver.js';
import { eventually, rulesDirWith } from '../../helpers/rules.js';
import { removeTempDirs } from '../../helpers/temp-dir.js';
import { startWebhookSink, type WebhookSink } from '../../helpers/webhook-sink.js';
import { ADMIN_TOKEN, ruleYaml } from '../../integration/console/console-harness.js';

let browser: Browser;
let receiver: TestReceiver;
let down: WebhookSink;
let slow: WebhookSink;

async function ingest(email: string): Promise<number> {
  const reply = await postSigned(receiver.webhookUrl(), sampleTransferSucceeded({ email }), TEST_SECRET);
  expect(reply.status).toBe(200);
  return reply.json.id as number;
}

async function openEvent(page: Page, id: number): Promise<void> {
  await page.goto(`${receiver.url}/console#/events/${id}`);
  await page.locator('article.delivery').first().waitFor();
}

describeWithBrowser('console: why a pending delivery waits, on the event page', () => {
  beforeAll(async () => {
    down = await startWebhookSink(() => 503);
    slow = await startWebhookSink(() => 503);
    receiver = await startTestReceiver({
      rulesDir: rulesDirWith({
        // Two failures in a row pause a destination for an hour: its third delivery waits for the circuit.
        'down.yaml': ruleYaml({ id: 'down', url: down.url, extra: 'where:\n  result.email: down@example.com\nretry:\n  schedule: [0s, 1h]\n' }),
        'slow.yaml': ruleYaml({ id: 'slow', url: slow.url, extra: 'where:\n  result.email: slow@example.com\nretry:\n  schedule: [0s, 1h]\n' }),
      }),
      admin: { token: ADMIN_TOKEN },
      delivery: { allowNetworks: ['127.0.0.1/32'], pollIntervalMs: 50, failureThreshold: 2, coolDownMs: 3_600_000 },
    });
    browser = await launchBrowser();
  });

  afterAll(async () => {
    await browser?.close();
    await receiver?.close();
    await down?.close();
    await slow?.close();
    removeTempDirs();
  });

  it('shows the destination paused until a time on this node, and the next attempt of the retry schedule', async () => {
    await ingest('down@example.com');
    await ingest('down@example.com');
    await down.waitFor(2);
    const held = await ingest('down@example.com');
    const scheduled = await ingest('slow@example.com');
    await slow.waitFor(1);
    const auth = { authorization: `Bearer ${ADMIN_TOKEN}` };
    const waitOf = async (id: number) => (await send(`${receiver.url}/admin/api/events/${id}`, { headers: auth })).json.deliveries[0]?.wait;
    await eventually(async () => (await waitOf(held))?.reason === 'circuit_open' && (await waitOf(held)).since !== null, 10_000, 'the circuit holding the third delivery');
    await eventually(async () => (await waitOf(scheduled))?.reason === 'retry_schedule', 10_000, 'the slow delivery on its schedule');

    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    try {
      await logInToConsole(page, receiver.url, ADMIN_TOKEN);

      await openEvent(page, held);
      const paused = page.locator('.delivery-wait[data-reason="circuit_open"]');
      await paused.waitFor();
      const headline = await paused.locator('.wait-headline').textContent();
      expect(headline).toMatch(new RegExp(`^Destination paused on node ${receiver.node.id} until .+, then attempt 1 of 2 · failing since .+$`));
      expect(await paused.locator('.wait-headline time').count()).toBe(2);
      const pausedUntil = (await waitOf(held)).until;
      expect(await paused.locator('.wait-headline time').first().getAttribute('datetime')).toBe(pausedUntil);
      expect(await paused.locator('.wait-why').textContent()).toContain(`the circuit for ${new URL(down.url).origin} is open on this node`);

      await openEvent(page, scheduled);
      const next = page.locator('.delivery-wait[data-reason="retry_schedule"]');
      await next.waitFor();
      expect(await next.locator('.wait-headline').textContent()).toMatch(/^Attempt 2 of 2 .+$/);
      expect(await next.locator('.wait-why').textContent()).toBe('attempt 2 of 2 on the retry schedule (0s, 1h)');
    } finally {
      await page.close();
    }
  });
});
