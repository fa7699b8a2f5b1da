import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { sampleTransferSucceeded } from '../../../src/samples/transfer-succeeded.js';
import { describeWithBrowser, launchBrowser, saveScreenshot } from '../../helpers/browser.js';
import { postSigned } from '../../helpers/http.js';
import { TEST_SECRET, type TestReceiver } from '../../helpers/receiver.js';
import { removeTempDirs } from '../../helpers/temp-dir.js';
import { startWebhookSink, type WebhookSink } from '../../helpers/webhook-sink.js';
import { ADMIN_TOKEN, ruleYaml, startConsoleReceiver } from '../../integration/console/console-harness.js';

let browser: Browser;
let receiver: TestReceiver & { rulesDir: string };
let oldSink: WebhookSink;
let newSink: WebhookSink;

beforeAll(async () => {
  [browser, oldSink, newSink] = await Promise.all([launchBrowser(), startWebhookSink(), startWebhookSink()]);
  receiver = await startConsoleReceiver([{ id: 'fwd', url: oldSink.url }]);
});

afterAll(async () => {
  await browser?.close();
  await receiver?.close();
  await oldSink?.close();
  await newSink?.close();
  removeTempDirs();
});

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function openFilteredEvents(page: Page, email: string): Promise<void> {
  await page.goto(`${receiver.url}/console`);
  await page.getByLabel('Admin token').fill(ADMIN_TOKEN);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.getByRole('heading', { name: 'Events' }).waitFor();
  await page.goto(`${receiver.url}/console#/events?email=${encodeURIComponent(email)}`);
  await page.locator('#bulk-replay-card summary').click();
}

/** Starts a bulk replay and waits until its job (not the one before) is done; returns that job's panel. */
async function runJob(page: Page, previousJobId: string | null): Promise<Locator> {
  await page.locator('#bulk-replay').click();
  const done = page.locator(`#bulk-job .job[data-state="done"]${previousJobId === null ? '' : `:not([data-job-id="${previousJobId}"])`}`);
  await done.waitFor();
  return done;
}

describeWithBrowser('console: bulk replay of the filtered events by routing mode', () => {
  it('dry-runs with counts per rule and a sample, then replays: original to the destination of that time, current to today\'s', async () => {
    for (const email of ['bulk@example.com', 'bulk@example.com', 'other@example.com']) {
      const reply = await postSigned(receiver.webhookUrl(), sampleTransferSucceeded({ email }), TEST_SECRET);
      expect(reply.status, reply.text).toBe(200);
    }
    await oldSink.waitFor(3);
    const firstHash = receiver.rules.current().hash;
    writeFileSync(join(receiver.rulesDir, 'fwd.yaml'), ruleYaml({ id: 'fwd', url: newSink.url }));
    await receiver.rules.check();
    expect(receiver.rules.current().hash).not.toBe(firstHash);

    const page = await browser.newPage();
    const dialogs: string[] = [];
    page.on('dialog', (dialog) => {
      dialogs.push(dialog.message());
      void dialog.accept();
    });
    try {
      await openFilteredEvents(page, 'bulk@example.com');

      // A dry run through the rules of that time: where the two selected events would go, nothing sent.
      await page.locator('#bulk-route').selectOption('original');
      await page.locator('#bulk-dry-run').check();
      const dry = await runJob(page, null);
      expect(await dry.locator('h2').textContent()).toMatch(/^Dry run of a bulk replay #\d+$/);
      expect(await dry.locator('.job-counts').textContent()).toContain('2 of 2 processed · 2 deliveries it would queue · 0 failed');
      const summary = dry.locator('#bulk-replay-summary');
      expect(await summary.locator('p').first().textContent()).toBe('Dry run, route original: nothing was sent. Per rule, what would be:');
      expect(await summary.locator('ul.plan').first().locator('li').allTextContents()).toEqual(['fwd: 2']);
      const sample = await summary.locator('ul.plan').nth(1).locator('li').allTextContents();
      expect(sample).toHaveLength(2);
      for (const line of sample) expect(line).toMatch(new RegExp(`^#\\d+ → fwd \\(${firstHash}\\) ${oldSink.url}$`));
      expect(dialogs).toEqual([]); // a dry run asks nothing
      await saveScreenshot(page, 'console-bulk-replay');
      await sleep(300);
      expect([oldSink.received.length, newSink.received.length]).toEqual([3, 0]);

      // The real run, route original: the destination of that time, after a confirmation.
      await page.locator('#bulk-dry-run').uncheck();
      const original = await runJob(page, await dry.getAttribute('data-job-id'));
      expect(dialogs).toEqual(['Replay every event these filters select through the rules that routed each event when it arrived? Each matching rule gets a new delivery.']);
      expect(await original.locator('h2').textContent()).toMatch(/^Bulk replay #\d+$/);
      expect(await original.locator('#bulk-replay-summary ul.plan').first().locator('li').allTextContents()).toEqual(['fwd: 2']);
      await oldSink.waitFor(5);

      // Route current: today's destination.
      await page.locator('#bulk-route').selectOption('current');
      await runJob(page, await original.getAttribute('data-job-id'));
      await newSink.waitFor(2);
      await sleep(300);
      expect([oldSink.received.length, newSink.received.length]).toEqual([5, 2]); // the third event was not selected
    } finally {
      await page.close();
    }
  });

  it('shows a bulk replay that is already running when the page opens, and its start button waits for it', async () => {
    // Recorded as this server's own job: a job of no live node would be failed at its next heartbeat.
    const [node] = await receiver.store.listLiveNodes();
    expect(node).toBeDefined();
    const job = await receiver.store.createJob({ kind: 'replay', filter: { email: 'elsewhere@example.com' }, ruleId: null, total: 40, startedAt: Date.now(), nodeId: node!.id });
    const page = await browser.newPage();
    try {
      await openFilteredEvents(page, 'bulk@example.com');
      await page.locator(`#bulk-job .job[data-state="running"][data-job-id="${job.id}"]`).waitFor();
      expect(await page.locator('#bulk-replay').isDisabled()).toBe(true);
    } finally {
      await page.close();
      await receiver.store.finishJob(job.id, 'cancelled', null);
    }
  });
}, { timeout: 90_000 });
