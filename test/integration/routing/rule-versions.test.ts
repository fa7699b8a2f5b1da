import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { sampleTransferSucceeded } from '../../../src/samples/transfer-succeeded.js';
import { describeEachBackend } from '../../helpers/backends.js';
import { postSigned } from '../../helpers/http.js';
import { startTestReceiver, TEST_SECRET, type TestReceiver } from '../../helpers/receiver.js';
import { eventually, rulesDirWith, TEST_DELIVERY } from '../../helpers/rules.js';
import { removeTempDirs } from '../../helpers/temp-dir.js';
import { startWebhookSink, type WebhookSink } from '../../helpers/webhook-sink.js';

afterAll(() => removeTempDirs());

/** A rule whose first attempt waits `firstDelay`, so the test can change the rule while the delivery is pending. */
const rule = (url: string, firstDelay: string, header: string): string =>
  `id: fwd\non: [transfer:succeeded]\nto:\n  url: ${url}\n  headers:\n    X-Version: "${header}"\nretry:\n  schedule: [${firstDelay}]\n`;

describeEachBackend('a delivery is sent with the rule version it was planned with', (backend) => {
  // The thread is given the receiver's rules at each reload; the worker on the event loop reads them directly.
  describe.each([
    { worker: 'on the event loop', thread: false },
    { worker: 'in the delivery thread', thread: true },
  ])('with the worker $worker', ({ thread }) => {
    it('goes to the old destination with the old headers after the rule changed, resolving ${ENV} on the sending node', async () => {
      const before = await startWebhookSink();
      const after = await startWebhookSink();
      const dir = rulesDirWith({ 'fwd.yaml': rule(before.url, '1500ms', 'v1-${VERSION_TAG}') });
      const app = await startTestReceiver({ ...(await backend.storage()), rulesDir: dir, delivery: { ...TEST_DELIVERY, thread } }, { env: { VERSION_TAG: 'resolved' } });
      try {
        const planned = await postSigned(app.webhookUrl(), sampleTransferSucceeded(), TEST_SECRET);
        const firstHash = app.rules.current().hash;
        writeFileSync(join(dir, 'fwd.yaml'), rule(after.url, '0ms', 'v2'));
        await eventually(() => app.rules.current().hash !== firstHash, 8000, 'the edit to be loaded');
        expect((await app.store.getRuleSet(firstHash))?.kind).toBe('loaded');
        expect((await app.store.getRuleSet(app.rules.current().hash))?.kind).toBe('loaded');

        const [sent] = await before.waitFor(1);
        expect(sent!.headers['x-version']).toBe('v1-resolved');
        expect(after.received).toHaveLength(0);
        const delivery = await eventually(async () => {
          const [d] = (await app.store.listDeliveries({ eventId: planned.json.id }, { limit: 1 })).items;
          return d?.state === 'delivered' ? d : null;
        }, 5000, 'the attempt to be recorded');
        expect(delivery.ruleSetHash).toBe(firstHash);
        expect(await app.store.getEvent(planned.json.id)).toMatchObject({ ruleSetHash: firstHash });

        await postSigned(app.webhookUrl(), sampleTransferSucceeded(), TEST_SECRET);
        const [fresh] = await after.waitFor(1);
        expect(fresh!.headers['x-version']).toBe('v2');
      } finally {
        await app.close();
        await before.close();
        await after.close();
      }
    });

    /**
     * Plans a delivery under rule version v1 (first attempt 1.5 s away), rewrites the rule file to `edited`
     * before that attempt, waits for the reload, then runs `check` on the delivery's event id and the sink.
     */
    async function editRuleWhilePending(
      edited: (sinkUrl: string) => string,
      waitLabel: string,
      check: (eventId: number, app: TestReceiver, sink: WebhookSink) => Promise<void>,
    ): Promise<void> {
      const sink = await startWebhookSink();
      const dir = rulesDirWith({ 'fwd.yaml': rule(sink.url, '1500ms', 'v1') });
      const app = await startTestReceiver({ ...(await backend.storage()), rulesDir: dir, delivery: { ...TEST_DELIVERY, thread } });
      try {
        const planned = await postSigned(app.webhookUrl(), sampleTransferSucceeded(), TEST_SECRET);
        const hash = app.rules.current().hash;
        writeFileSync(join(dir, 'fwd.yaml'), edited(sink.url));
        await eventually(() => app.rules.current().hash !== hash, 8000, waitLabel);
        await check(planned.json.id, app, sink);
      } finally {
        await app.close();
        await sink.close();
      }
    }

    it('is held while its rule is disabled today, whatever version it has', async () => {
      await editRuleWhilePending((url) => `${rule(url, '0ms', 'v2')}enabled: false\n`, 'the rule to be disabled', async (eventId, app, sink) => {
        await new Promise((resolve) => setTimeout(resolve, 2000));
        expect(sink.received).toHaveLength(0);
        const [held] = (await app.store.listDeliveries({ eventId }, { limit: 1 })).items;
        expect(held).toMatchObject({ state: 'pending', attempts: 0 });
      });
    });

    it('is dead-lettered when its rule was removed from today\'s rules, whatever version it has', async () => {
      await editRuleWhilePending((url) => rule(url, '0ms', 'other').replace('id: fwd', 'id: other'), 'the rule to be removed', async (eventId, app, sink) => {
        const dead = await eventually(async () => {
          const [d] = (await app.store.listDeliveries({ eventId }, { limit: 1 })).items;
          return d?.state === 'dead' ? d : null;
        }, 8000, 'the delivery to be dead-lettered');
        expect(dead.deadReason).toBe('rule removed');
        expect(sink.received).toHaveLength(0);
      });
    });
  });
});
