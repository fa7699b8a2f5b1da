import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { sampleTransferSucceeded } from '../../../src/samples/transfer-succeeded.js';
import { describeWithBrowser, launchBrowser, saveScreenshot } from '../../helpers/browser.js';
import { postSigned } from '../../helpers/http.js';
import { TEST_SECRET, type TestReceiver } from '../../helpers/receiver.js';
import { removeTempDirs } from '../../helpers/temp-dir.js';
import { startWebhookSink, type WebhookSink } from '../../helpers/webhook-sink.js';
import { ADMIN_TOKEN, startConsoleReceiver } from '../../integration/console/console-harness.js';

// The docs screenshots are made once, on purpose: HOOKRELAY_DOCS_IMAGES=1 npx vitest run test/browser/console
const DOCS_IMAGES = process.env.HOOKRELAY_DOCS_IMAGES === '1';
const DOCS_IMAGES_DIR = fileURLToPath(new URL('../../../docs/images/', import.meta.url));

let browser: Browser;
let receiver: TestReceiver & { rulesDir: string };
let sink: WebhookSink;
let failingSink: WebhookSink;
const ids: Record<string, number> = {};
const INITIAL_EVENTS = 8;
const bodies: Record<string, Buffer> = {};

async function post(name: string, body: unknown): Promise<number> {
  const reply = await postSigned(receiver.webhookUrl(), body, TEST_SECRET);
  expect(reply.status, reply.text).toBeLessThan(300);
  const newest = (await receiver.store.listEvents({}, { limit: 1 })).items[0]!;
  ids[name] = newest.id;
  bodies[name] = Buffer.from(JSON.stringify(body));
  return newest.id;
}

async function screenshot(page: Page, name: string, docsName?: string): Promise<void> {
  const path = await saveScreenshot(page, name);
  if (DOCS_IMAGES && docsName) {
    mkdirSync(DOCS_IMAGES_DIR, { recursive: true });
    copyFileSync(path, join(DOCS_IMAGES_DIR, `${docsName}.png`));
  }
}

async function logIn(page: Page): Promise<void> {
  await page.goto(`${receiver.url}/console`);
  expect(new URL(page.url()).pathname).toBe('/console/login');
  await page.getByLabel('Admin token').fill(ADMIN_TOKEN);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.getByRole('heading', { name: 'Events' }).waitFor();
}

async function horizontalOverflow(page: Page): Promise<number> {
  return page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth');
}

beforeAll(async () => {
  [browser, sink, failingSink] = await Promise.all([launchBrowser(), startWebhookSink(), startWebhookSink(() => ({ status: 503, body: '{"error":"maintenance"}' }))]);
  receiver = await startConsoleReceiver([
    { id: 'fulfilment', url: sink.url, description: 'Every purchase, byte for byte, to the fulfilment service' },
    {
      id: 'crm-sync',
      url: failingSink.url,
      description: 'Multi-token purchases to the CRM (its endpoint is down)',
      extra: 'where:\n  result.quantity: { $gt: 1 }\ntransform: |\n  { "email": result.email, "checkout": result.checkoutId, "tokens": result.quantity }\nretry:\n  schedule: [0s]\n',
    },
  ]);
  await post('alice', sampleTransferSucceeded({ email: 'alice@example.com', quantity: 1 }));
  await post('bob', sampleTransferSucceeded({ email: 'bob@example.com', quantity: 3 }));
  await post('carol', sampleTransferSucceeded({ email: 'carol@example.com', quantity: 2 }));
  for (const name of ['dave', 'erin', 'frank', 'grace', 'heidi']) {
    await post(name, sampleTransferSucceeded({ email: `${name}@example.com`, quantity: 1, paymentMethod: name === 'erin' ? 'CRYPTO' : 'BUY_WITH_CARD' }));
  }
  await sink.waitFor(INITIAL_EVENTS);
  await failingSink.waitFor(2);
});

afterAll(async () => {
  await browser?.close();
  await receiver?.close();
  await sink?.close();
  await failingSink?.close();
  removeTempDirs();
});

describeWithBrowser('console in a browser', () => {
  it('logs in, filters the events, opens one, replays it and shows the new delivery reach the sink', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const pageErrors: string[] = [];
    page.on('pageerror', (err) => pageErrors.push(String(err)));
    try {
      await page.goto(`${receiver.url}/console`);
      await page.getByLabel('Admin token').fill('not-the-token');
      await page.getByRole('button', { name: 'Log in' }).click();
      await page.getByText('That is not the admin token.').waitFor();
      await page.getByLabel('Admin token').fill(ADMIN_TOKEN);
      await page.getByRole('button', { name: 'Log in' }).click();
      await page.getByRole('heading', { name: 'Events' }).waitFor();
      expect(await page.evaluate<string>('JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage })')).not.toContain(ADMIN_TOKEN);
      expect(await page.evaluate<string>('document.cookie')).not.toContain('hookrelay_session');

      const rows = page.locator('tbody tr[data-event-id]');
      await expect.poll(() => rows.count()).toBe(INITIAL_EVENTS);
      // Whether each event was forwarded: bob's and carol's crm-sync deliveries died, the others all arrived.
      const forwarded = async (name: string) => (await page.locator(`tr[data-event-id="${ids[name]}"] td[data-label="Forwarded"]`).textContent())?.trim();
      expect(await forwarded('alice')).toBe('delivered');
      expect(await forwarded('bob')).toBe('dead 1 delivered, 1 dead');
      await screenshot(page, 'console-events', 'console-events');

      await page.getByLabel('Email').fill('bob@example.com');
      await page.getByRole('button', { name: 'Apply filters' }).click();
      await expect.poll(() => rows.count()).toBe(1);
      expect(new URL(page.url()).hash).toBe('#/events?email=bob%40example.com');
      await page.getByLabel('Validation').selectOption('unrecognised');
      await page.getByRole('button', { name: 'Apply filters' }).click();
      await page.getByText('No events match these filters.').waitFor();
      await page.getByRole('link', { name: 'Clear' }).click();
      await expect.poll(() => rows.count()).toBe(INITIAL_EVENTS);
      await page.getByLabel('Delivery state').selectOption('dead');
      await page.getByRole('button', { name: 'Apply filters' }).click();
      await expect.poll(() => rows.count()).toBe(2); // bob's and carol's crm-sync deliveries died
      await page.getByRole('link', { name: 'Clear' }).click();
      // Clear re-renders the page on the hash change: typing before that would go into the old form.
      await expect.poll(() => rows.count()).toBe(INITIAL_EVENTS);
      await page.getByLabel('Received from').fill('2099-01-01T00:00:00');
      await page.getByRole('button', { name: 'Apply filters' }).click();
      await page.getByText('No events match these filters.').waitFor();
      await page.getByRole('link', { name: 'Clear' }).click();
      await expect.poll(() => rows.count()).toBe(INITIAL_EVENTS);
      await page.getByLabel('Email').fill('bob@example.com');
      await page.getByRole('button', { name: 'Apply filters' }).click();
      await expect.poll(() => rows.count()).toBe(1);

      await rows.first().getByRole('link', { name: 'transfer:succeeded' }).click();
      await page.getByRole('heading', { name: 'Deliveries' }).waitFor();
      expect(new URL(page.url()).hash).toBe(`#/events/${ids.bob}`);
      expect(JSON.parse((await page.locator('#event-body').textContent())!)).toEqual(JSON.parse(bodies.bob!.toString()));
      const fulfilment = page.locator('[data-rule-id="fulfilment"] .delivery');
      await expect.poll(() => fulfilment.count()).toBe(1);
      await page.locator('[data-rule-id="crm-sync"] .delivery[data-state="dead"]').waitFor();

      const before = sink.received.length;
      await page.getByRole('button', { name: 'Replay to all matching rules' }).click();
      await page.getByText('Queued 2 new deliveries.').waitFor();
      const replayed = (await sink.waitFor(before + 1))[before]!;
      expect(replayed.rawBody.equals(bodies.bob!)).toBe(true);
      // The timeline picks up the new delivery and its attempt.
      await expect.poll(() => fulfilment.count()).toBe(2);
      const newest = fulfilment.last();
      await newest.locator('.badge', { hasText: 'delivered' }).first().waitFor();
      expect(await newest.textContent()).toContain('replay');
      expect(await newest.locator('.attempt').count()).toBe(1);
      expect(await newest.locator('.attempt').textContent()).toContain('HTTP 200');
      await screenshot(page, 'console-event-detail', 'console-event-detail');

      // One rule only.
      await page.getByLabel('One rule').selectOption('fulfilment');
      await page.getByRole('button', { name: 'Replay to this rule' }).click();
      await page.getByText('Queued 1 new delivery.').waitFor();
      await sink.waitFor(before + 2);
      await expect.poll(() => fulfilment.count()).toBe(3);
      expect(pageErrors).toEqual([]);
    } finally {
      await page.close();
    }
  });

  it('resends the stored bytes to a URL and retries a dead delivery from the event page', async () => {
    const page = await browser.newPage({ viewport: { width: 1100, height: 900 } });
    try {
      await logIn(page);
      await page.goto(`${receiver.url}/console#/events/${ids.carol}`);
      await page.getByRole('heading', { name: 'Resend to a URL' }).waitFor();

      const before = sink.received.length;
      await page.getByLabel('URL').fill(`${sink.url}/resend`);
      await page.getByLabel('Signing').selectOption('original');
      await page.getByRole('button', { name: 'Resend', exact: true }).click();
      await page.locator('.result dl').getByText('200').waitFor();
      const [resent] = (await sink.waitFor(before + 1)).slice(before);
      expect(resent!.path).toBe('/hooks/resend');
      expect(resent!.rawBody.equals(bodies.carol!)).toBe(true);
      expect(resent!.headers['x-service-signature']).toBeDefined();

      const failuresBefore = failingSink.received.length;
      const dead = page.locator('[data-rule-id="crm-sync"] .delivery[data-state="dead"]').first();
      await dead.getByRole('button', { name: 'Retry' }).click();
      await page.getByText(/is due again/).waitFor();
      await failingSink.waitFor(failuresBefore + 1);
      // Tried again, failed again: the timeline shows a second attempt.
      await expect.poll(async () => page.locator('[data-rule-id="crm-sync"] .attempt').count(), { timeout: 10_000 }).toBeGreaterThanOrEqual(2);

      // A rule the event does not match: the reason is shown, and only a forced replay queues it.
      await page.goto(`${receiver.url}/console#/events/${ids.alice}`);
      await page.getByLabel('One rule').selectOption('crm-sync');
      await page.getByRole('button', { name: 'Replay to this rule' }).click();
      await page.getByText(/does not match rule "crm-sync"/).waitFor();
      const failures = failingSink.received.length;
      await page.getByLabel('even if it does not match').check();
      await page.getByRole('button', { name: 'Replay to this rule' }).click();
      await page.getByText('Queued 1 new delivery.').waitFor();
      await failingSink.waitFor(failures + 1);
      await page.locator('[data-rule-id="crm-sync"] .delivery[data-state="dead"]').waitFor();
    } finally {
      await page.close();
    }
  });

  it('prepends events that arrive while the events page is open', async () => {
    const page = await browser.newPage();
    try {
      await logIn(page);
      const rows = page.locator('tbody tr[data-event-id]');
      // The heading shows before the first page of events: count only once the newest stored event is listed.
      await page.locator(`tbody tr[data-event-id="${Math.max(...Object.values(ids))}"]`).waitFor();
      const count = await rows.count();
      expect(count).toBeGreaterThan(0);
      const id = await post('live', sampleTransferSucceeded({ email: 'live@example.com', quantity: 1 }));
      await page.locator(`tbody tr[data-event-id="${id}"]`).waitFor({ timeout: 10_000 });
      expect(await rows.count()).toBe(count + 1);
      expect(await rows.first().getAttribute('data-event-id')).toBe(String(id));
      // It followed the event stream, not a poll.
      expect(await page.locator('[data-follow]').getAttribute('data-follow')).toBe('stream');
      expect(receiver.eventStreams.stats().open).toBeGreaterThanOrEqual(1);
    } finally {
      await page.close();
    }
  });

  it('falls back to polling when the event stream cannot be opened', async () => {
    const page = await browser.newPage();
    try {
      await page.route('**/admin/api/events/stream*', (route) => route.abort());
      await logIn(page);
      await page.locator('[data-follow="polling"]').waitFor({ timeout: 10_000 });
      const id = await post('polled', sampleTransferSucceeded({ email: 'polled@example.com', quantity: 1 }));
      await page.locator(`tbody tr[data-event-id="${id}"]`).waitFor({ timeout: 10_000 });
      expect(await page.locator('tbody tr[data-event-id]').first().getAttribute('data-event-id')).toBe(String(id));
    } finally {
      await page.close();
    }
  });

  it('shows attacker-controlled text as text and runs none of it', async () => {
    const id = await post('hostile', { event: '<img src=x onerror="window.__xss=1">', result: { id: 'hostile-1', email: '<script>window.__xss=2</script>', note: '</pre><img src=x onerror="window.__xss=3">' } });
    const page = await browser.newPage();
    try {
      await logIn(page);
      await page.getByText('<img src=x onerror="window.__xss=1">').waitFor();
      await page.goto(`${receiver.url}/console#/events/${id}`);
      await page.getByRole('heading', { name: 'Body' }).waitFor();
      expect(await page.locator('#event-body').textContent()).toContain('</pre><img src=x onerror=\\"window.__xss=3\\">');
      expect(await page.locator('main img, main script').count()).toBe(0);
      expect(await page.evaluate<unknown>('window.__xss')).toBeUndefined();
    } finally {
      await page.close();
    }
  });

  it('lists dead letters and retries them in bulk with a progress bar', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    try {
      // Earlier tests' last attempts may still be being recorded: count the dead letters once none is pending.
      const pending = async () => (await receiver.store.listDeliveries({ state: 'pending' }, { limit: 100 })).items.length;
      await expect.poll(pending, { timeout: 10_000 }).toBe(0);
      const dead = (await receiver.store.listDeliveries({ state: 'dead' }, { limit: 100 })).items.length;
      expect(dead).toBeGreaterThanOrEqual(2);
      await logIn(page);
      await page.getByRole('link', { name: 'Dead letters' }).click();
      const rows = page.locator('tbody tr[data-delivery-id]');
      await expect.poll(() => rows.count(), { timeout: 10_000 }).toBe(dead);
      await page.getByLabel('Rule').selectOption('crm-sync');
      await expect.poll(() => page.url()).toContain('#/dead-letters?ruleId=crm-sync');

      const before = failingSink.received.length;
      // The bulk action asks first, naming how many it will retry; declining does nothing.
      const dialogs: string[] = [];
      page.once('dialog', (dialog) => {
        dialogs.push(dialog.message());
        void dialog.dismiss();
      });
      await page.getByRole('button', { name: 'Retry all dead for crm-sync' }).click();
      await expect.poll(() => dialogs.length).toBe(1);
      expect(dialogs[0]).toBe(`Retry ${dead} dead letters of rule crm-sync? Each becomes pending and due now.`);
      expect(await page.locator('section.job').count()).toBe(0);
      expect(await page.getByRole('button', { name: 'Retry all dead for crm-sync' }).isDisabled()).toBe(false);
      page.once('dialog', (dialog) => {
        dialogs.push(dialog.message());
        void dialog.accept();
      });
      await page.getByRole('button', { name: 'Retry all dead for crm-sync' }).click();
      const job = page.locator('section.job');
      await job.waitFor();
      expect(await page.locator('#job-progress').count()).toBe(1);
      await job.locator('.badge', { hasText: 'done' }).waitFor({ timeout: 15_000 });
      expect(await job.locator('.job-counts').textContent()).toContain(`${dead} of ${dead} processed`);
      const progress = page.locator('#job-progress');
      expect(await progress.getAttribute('value')).toBe(await progress.getAttribute('max'));
      await failingSink.waitFor(before + dead);
      // Each retried delivery failed again and is back in the list.
      await expect
        .poll(async () => (await receiver.store.listDeliveries({ state: 'dead', ruleId: 'crm-sync' }, { limit: 100 })).items.length, { timeout: 10_000 })
        .toBe(dead);
      await page.getByRole('button', { name: 'Refresh' }).click();
      await expect.poll(() => rows.count()).toBe(dead);
      expect(await rows.first().locator('td[data-label="Attempts"]').textContent()).toBe('2');
      await screenshot(page, 'console-dead-letters', 'console-dead-letters');
    } finally {
      await page.close();
    }
  });

  it('follows a long bulk retry and cancels it', async () => {
    // The real jobs finish in a blink at this size, so the browser is shown a slow one.
    const page = await browser.newPage();
    let processed = 0;
    let state = 'running';
    const cancelRequests: Record<string, string>[] = [];
    const job = () => ({
      id: 99, kind: 'retry', state, filter: {}, ruleId: null, total: 40, processed, created: processed, failed: 0,
      startedAt: new Date().toISOString(), finishedAt: state === 'running' ? null : new Date().toISOString(), error: null,
    });
    try {
      await logIn(page);
      await page.route('**/admin/api/deliveries/retry', (route) => route.fulfill({ status: 202, json: job() }));
      await page.route('**/admin/api/jobs/99', (route) => {
        processed = Math.min(processed + 10, 30);
        return route.fulfill({ json: job() });
      });
      await page.route('**/admin/api/jobs/99/cancel', (route) => {
        cancelRequests.push(route.request().headers());
        state = 'cancelled';
        return route.fulfill({ json: job() });
      });
      await page.route('**/admin/api/deliveries/dead-count*', (route) => route.fulfill({ json: { count: 40 } }));
      page.on('dialog', (dialog) => void dialog.accept());
      await page.getByRole('link', { name: 'Dead letters' }).click();
      await page.getByRole('button', { name: 'Retry all dead letters' }).click();
      await expect.poll(() => page.locator('#job-progress').getAttribute('value'), { timeout: 10_000 }).toBe('30');
      expect(await page.locator('#job-progress').getAttribute('max')).toBe('40');
      expect(await page.locator('.job-counts').textContent()).toContain('30 of 40 processed');
      expect(await page.getByRole('button', { name: 'Retry all dead letters' }).isDisabled()).toBe(true);

      await page.getByRole('button', { name: 'Cancel' }).click();
      await page.locator('section.job .badge', { hasText: 'cancelled' }).waitFor();
      expect(await page.getByRole('button', { name: 'Cancel' }).count()).toBe(0);
      expect(await page.getByRole('button', { name: 'Retry all dead letters' }).isDisabled()).toBe(false);
      expect(cancelRequests).toHaveLength(1);
      expect(cancelRequests[0]!['x-csrf-token']).toMatch(/^[\w-]{43}$/);
    } finally {
      await page.close();
    }
  });

  it('shows the rules in use with counts, dry-runs one against an event, and reports a bad edit with file:line', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    try {
      await logIn(page);
      await page.getByRole('link', { name: 'Rules' }).click();
      const fulfilment = page.locator('tr[data-rule-id="fulfilment"]');
      await fulfilment.waitFor();
      expect(await fulfilment.textContent()).toContain('fulfilment.yaml:1');
      expect(Number(await fulfilment.locator('td[data-label="Delivered"]').textContent())).toBeGreaterThanOrEqual(5);

      // This node's limit per destination origin: the healthy sink's and the failing one's, each within its ceiling of 256.
      for (const url of [sink.url, failingSink.url]) {
        const row = page.locator(`tr[data-destination="${new URL(url).origin}"]`);
        await row.waitFor();
        expect(await row.locator('td[data-label="Limit"]').textContent()).toMatch(/^\d+ \/ 256$/);
        expect(await row.locator('td[data-label="Circuit"]').textContent()).toBe('closed');
      }

      await page.getByLabel('Rule', { exact: true }).selectOption('crm-sync');
      await page.getByLabel('Event id').fill(String(ids.alice));
      await page.getByRole('button', { name: 'Dry run' }).click();
      const result = page.locator('.dry-run-result');
      await result.waitFor();
      expect(await result.getAttribute('data-matched')).toBe('false');
      expect(await result.textContent()).toContain('where');

      await page.getByLabel('Event id').fill(String(ids.bob));
      await page.getByRole('button', { name: 'Dry run' }).click();
      await page.locator('.dry-run-result[data-matched="true"]').waitFor();
      expect(await page.locator('.dry-run-result pre').textContent()).toContain('bob@example.com');
      await screenshot(page, 'console-rules', 'console-rules');

      writeFileSync(join(receiver.rulesDir, 'broken.yaml'), 'id: broken\non: [transfer:succeeded]\nto:\n  url: http://127.0.0.1:9/x\ntimeout: soon\n');
      await expect
        .poll(
          async () => {
            await page.reload();
            await page.locator('tr[data-rule-id]').first().waitFor();
            return page.locator('.card.alert').count();
          },
          { timeout: 15_000, interval: 500 },
        )
        .toBe(1);
      expect(await page.locator('.card.alert').textContent()).toMatch(/broken\.yaml:\d+/);
      await saveScreenshot(page, 'console-rules-error');
    } finally {
      await page.close();
    }
  });

  it('shows a delivery held by a disabled rule as paused with the reason, and a dead letter never sent as such', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    // The admin API's answers for these states (tested in test/integration/admin), laid over real data.
    const reason = 'rule "fulfilment" is disabled: its deliveries wait until it is enabled again';
    try {
      await logIn(page);
      await page.route(`**/admin/api/events/${ids.dave}`, async (route) => {
        const response = await route.fetch();
        const json = await response.json();
        json.deliveries[0] = { ...json.deliveries[0], state: 'pending', attempts: 0, attemptLog: [], nextAttemptAt: new Date(Date.now() + 30_000).toISOString(), pausedReason: reason };
        await route.fulfill({ response, json });
      });
      await page.goto(`${receiver.url}/console#/events/${ids.dave}`);
      const delivery = page.locator('[data-rule-id="fulfilment"] .delivery').first();
      await delivery.locator('.badge', { hasText: 'paused' }).waitFor();
      expect(await delivery.getAttribute('data-paused')).toBe('true');
      expect(await delivery.locator('.paused-reason').textContent()).toBe(`Paused: ${reason}`);
      expect(await delivery.textContent()).not.toContain('Next attempt');

      await page.route('**/admin/api/deliveries?*', async (route) => {
        const response = await route.fetch();
        const json = await response.json();
        if (new URL(route.request().url()).searchParams.get('state') === 'dead' && json.items.length > 0) {
          json.items[0] = { ...json.items[0], attempts: 1, lastStatus: null, lastAttemptSent: false, lastError: 'destination_refused: destination 10.0.0.1 refused: private address', deadReason: 'destination 10.0.0.1 refused: private address' };
        }
        await route.fulfill({ response, json });
      });
      await page.getByRole('link', { name: 'Dead letters' }).click();
      const first = page.locator('tbody tr[data-delivery-id]').first();
      await first.waitFor();
      expect(await first.locator('td[data-label="Last status"]').textContent()).toBe('never sent');
      expect(await first.locator('td[data-label="Why"]').textContent()).toBe('destination 10.0.0.1 refused: private address');
      expect(await page.locator('tbody tr[data-delivery-id]').nth(1).locator('td[data-label="Last status"]').textContent()).toBe('HTTP 503');
    } finally {
      await page.close();
    }
  });

  it('fits a phone screen without horizontal scrolling', async () => {
    const page = await browser.newPage({ viewport: { width: 375, height: 740 }, isMobile: true, hasTouch: true, deviceScaleFactor: 2 });
    try {
      await logIn(page);
      await page.locator('tbody tr[data-event-id]').first().waitFor();
      expect(await horizontalOverflow(page)).toBe(0);
      await saveScreenshot(page, 'console-events-phone');
      await page.goto(`${receiver.url}/console#/events/${ids.bob}`);
      await page.getByRole('heading', { name: 'Deliveries' }).waitFor();
      expect(await horizontalOverflow(page)).toBe(0);
      await saveScreenshot(page, 'console-event-detail-phone');
      for (const hash of ['#/dead-letters', '#/rules']) {
        await page.goto(`${receiver.url}/console${hash}`);
        await page.locator('table.data, .empty').first().waitFor();
        expect(await horizontalOverflow(page), hash).toBe(0);
      }
    } finally {
      await page.close();
    }
  });

  it('shows when an imported event was imported, beside its original receipt time', async () => {
    const receivedAt = Date.parse('2025-03-01T12:00:00.000Z');
    const importedAt = Date.now() - 60_000;
    const body = Buffer.from('{"event":"order:archived","result":{"id":"imported-1"}}');
    await receiver.store.importEvents([{
      source: 'checkout', event: 'order:archived', transferId: 'imported-1', checkoutId: null, email: null, walletAddress: null,
      validation: 'unrecognised', receivedAt, lastReceivedAt: receivedAt, receivedCount: 1, headers: {}, body,
    }], { importedAt });
    const [imported] = (await receiver.store.listEvents({ transferId: 'imported-1' }, { limit: 1 })).items;
    const page = await browser.newPage();
    try {
      await logIn(page);
      await page.goto(`${receiver.url}/console#/events/${imported!.id}`);
      const facts = page.locator('dl.facts');
      await facts.locator('dt:text-is("Imported")').waitFor();
      expect(await facts.locator('dt:text-is("Imported") + dd time').getAttribute('datetime')).toBe(new Date(importedAt).toISOString());
      expect(await facts.locator('dt:text-is("Received") + dd time').getAttribute('datetime')).toBe(new Date(receivedAt).toISOString());
      // A webhook received here has no import time.
      const alice = (await receiver.store.getEvent(ids.alice!))!;
      await page.goto(`${receiver.url}/console#/events/${alice.id}`);
      await facts.locator(`dt:text-is("Received") + dd time[datetime="${new Date(alice.receivedAt).toISOString()}"]`).waitFor();
      expect(await facts.locator('dt:text-is("Imported")').count()).toBe(0);
    } finally {
      await page.close();
    }
  });

  it('logs out: the session is gone and the console asks for the token again', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    try {
      await logIn(page);
      await page.getByRole('button', { name: 'Log out' }).click();
      await page.getByLabel('Admin token').waitFor();
      expect((await context.cookies()).map((cookie) => cookie.name)).toEqual([]);
      await page.goto(`${receiver.url}/console`);
      expect(new URL(page.url()).pathname).toBe('/console/login');
    } finally {
      await context.close();
    }
  });
});
