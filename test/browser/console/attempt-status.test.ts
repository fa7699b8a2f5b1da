import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { sampleTransferSucceeded } from '../../../src/samples/transfer-succeeded.js';
import { describeWithBrowser, launchBrowser } from '../../helpers/browser.js';
import { freeLoopbackPort, postSigned } from '../../helpers/http.js';
import { eventually } from '../../helpers/rules.js';
import { TEST_SECRET, type TestReceiver } from '../../helpers/receiver.js';
import { removeTempDirs } from '../../helpers/temp-dir.js';
import { startWebhookSink, type WebhookSink } from '../../helpers/webhook-sink.js';
import { logIn, startConsoleReceiver } from '../../integration/console/console-harness.js';

let browser: Browser;
let receiver: TestReceiver & { rulesDir: string };
let hanging: WebhookSink;
let eventId: number;

beforeAll(async () => {
  [browser, hanging] = await Promise.all([launchBrowser(), startWebhookSink(() => 'hang')]);
  const closedPort = await freeLoopbackPort(); // nothing listens there: every connection is refused
  receiver = await startConsoleReceiver([
    { id: 'closed', url: `http://127.0.0.1:${closedPort}/hook`, extra: 'retry:\n  schedule: [0s]\n' },
    { id: 'slow', url: hanging.url, extra: 'timeout: 200ms\nretry:\n  schedule: [0s]\n' },
  ]);
  const reply = await postSigned(receiver.webhookUrl(), sampleTransferSucceeded(), TEST_SECRET);
  expect(reply.status, reply.text).toBe(200);
  eventId = reply.json.id;
  await eventually(async () => (await receiver.store.listDeliveries({ state: 'dead' }, { limit: 10 })).items.length === 2, 10_000, 'both deliveries dead');
});

afterAll(async () => {
  await browser?.close();
  await receiver?.close();
  await hanging?.close();
  removeTempDirs();
});

describeWithBrowser('attempt status on the event page', () => {
  it('labels a refused connection "not sent" and a timeout "no response"', async () => {
    // Logged in over HTTP, the session cookies handed to the browser: the log-in form is tested elsewhere.
    const { session, csrf } = await logIn(receiver.url);
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    await context.addCookies(Object.entries({ hookrelay_session: session, hookrelay_csrf: csrf }).map(([name, value]) => ({ name, value, url: receiver.url })));
    const page = await context.newPage();
    try {
      await page.goto(`${receiver.url}/console#/events/${eventId}`);
      const closed = page.locator('[data-rule-id="closed"] .attempt-line');
      const slow = page.locator('[data-rule-id="slow"] .attempt-line');
      await closed.waitFor();
      await slow.waitFor();
      expect(await closed.textContent()).toContain('not sent');
      expect(await closed.textContent()).not.toContain('no response');
      expect(await slow.textContent()).toContain('no response');
    } finally {
      await context.close();
    }
  });
});
