import { afterAll, expect, it } from 'vitest';
import { sampleTransferSucceeded } from '../../../src/samples/transfer-succeeded.js';
import { describeEachBackend } from '../../helpers/backends.js';
import { postSigned } from '../../helpers/http.js';
import { startTestReceiver, TEST_SECRET } from '../../helpers/receiver.js';
import { eventually, rulesDirWith, TEST_DELIVERY } from '../../helpers/rules.js';
import { removeTempDirs } from '../../helpers/temp-dir.js';
import { startWebhookSink } from '../../helpers/webhook-sink.js';

afterAll(() => removeTempDirs());

const RETENTION = { maxAgeDays: 30, maxEvents: 1, intervalMs: 3_600_000, batchSize: 50 };

describeEachBackend('a replay after retention removed its event', (backend) => {
  it('is answered 200 {duplicate:true} with the first event\'s id and is not forwarded again (retention.maxEvents: 1)', async () => {
    const sink = await startWebhookSink();
    const rulesDir = rulesDirWith({ 'fwd.yaml': `id: fwd\non: [transfer:succeeded]\nto:\n  url: ${sink.url}/hook\n` });
    const app = await startTestReceiver({ ...(await backend.storage()), rulesDir, retention: RETENTION, delivery: TEST_DELIVERY });
    try {
      const first = sampleTransferSucceeded();
      const answer = await postSigned(app.webhookUrl(), first, TEST_SECRET);
      expect(answer.json).toMatchObject({ duplicate: false });
      await sink.waitFor(1);
      await eventually(async () => (await app.store.outboxStats()).pending === 0, 10_000, 'the first delivery settled');
      await postSigned(app.webhookUrl(), sampleTransferSucceeded(), TEST_SECRET);
      await sink.waitFor(2);
      await eventually(async () => (await app.store.outboxStats()).pending === 0, 10_000, 'the second delivery settled');

      expect(await app.retention!.runOnce()).toMatchObject({ byCount: 1 });
      expect(await app.store.getEvent(answer.json.id)).toBeNull();

      const replay = await postSigned(app.webhookUrl(), first, TEST_SECRET);

      expect(replay.status).toBe(200);
      expect(replay.json).toEqual({ id: answer.json.id, duplicate: true, receivedCount: null });
      expect(await app.store.countEvents({})).toBe(1);
      // No outbox row was planned for the replay: nothing can forward it again.
      expect((await app.store.listDeliveries({}, { limit: 10 })).items).toHaveLength(1);
      expect(sink.received.filter((r) => JSON.parse(r.rawBody.toString()).result.id === first.result.id)).toHaveLength(1);
    } finally {
      await app.close();
      await sink.close();
    }
  });
});
