import { pino } from 'pino';
import { Agent } from 'undici';
import { afterAll, describe, expect, it } from 'vitest';
import { createCircuitBreaker } from '../../../src/delivery/circuit-breaker.js';
import { createDestinationLimiter } from '../../../src/delivery/destination-limiter.js';
import { DeliveryLoop } from '../../../src/delivery/delivery-loop.js';
import { loadRuleSet } from '../../../src/rules/loader.js';
import type { RuleSet } from '../../../src/rules/types.js';
import { SqliteStore } from '../../../src/store/sqlite/sqlite-store.js';
import type { Store } from '../../../src/store/store.js';
import { eventually, rulesDirWith } from '../../helpers/rules.js';
import { makeTempDir, removeTempDirs } from '../../helpers/temp-dir.js';
import { startWebhookSink } from '../../helpers/webhook-sink.js';

afterAll(() => removeTempDirs());

const LEASE_MS = 1_000;
const SINK_DELAY_MS = 3_500;

async function rulesFor(url: string): Promise<RuleSet> {
  const loaded = await loadRuleSet(rulesDirWith({ 'slow.yaml': `id: slow\non: [transfer:succeeded]\nto:\n  url: ${url}\ntimeout: 5s\n` }), {});
  if (!loaded.ok) throw new Error(JSON.stringify(loaded.errors));
  return loaded.ruleSet;
}

function worker(store: Store, rules: RuleSet): DeliveryLoop {
  return new DeliveryLoop({
    store, rules: () => rules, dispatcher: new Agent(), limiter: createDestinationLimiter(), breaker: createCircuitBreaker(),
    logger: pino({ level: 'silent' }), defaultConcurrency: 10, maxInFlight: 8, batchSize: 8, leaseMs: LEASE_MS, pollIntervalMs: 20,
  });
}

async function storeWithOneDelivery(): Promise<SqliteStore> {
  const store = new SqliteStore({ dataDir: makeTempDir(), durability: 'normal' });
  await store.saveEvent({
    source: 'checkout', event: 'transfer:succeeded', transferId: 'tr-1', checkoutId: null, email: null, walletAddress: null, validation: 'valid',
    receivedAt: Date.now(), headers: {}, body: Buffer.from('{"event":"transfer:succeeded","result":{"id":"tr-1"}}'),
    deliveries: [{ ruleId: 'slow', ruleSetHash: 'h', body: null, contentType: 'application/json' }],
  });
  return store;
}

describe('lease renewal of a running attempt', () => {
  it('keeps renewing a short lease while a slow destination answers: no second worker claims the row meanwhile', async () => {
    const sink = await startWebhookSink(() => ({ status: 200, delayMs: SINK_DELAY_MS }));
    const store = await storeWithOneDelivery();
    const rules = await rulesFor(sink.url);
    // Two workers on one store: the second takes the row the moment the first one's lease runs out.
    const workers = [worker(store, rules), worker(store, rules)];
    try {
      for (const w of workers) w.start();
      const [delivery] = (await store.listDeliveries({}, { limit: 1 })).items;
      const settled = await eventually(async () => {
        const detail = await store.getDelivery(delivery!.id);
        return detail?.state === 'delivered' ? detail : null;
      }, 10_000, 'the slow attempt recorded');
      expect(sink.received).toHaveLength(1);
      expect(settled.attemptLog).toEqual([expect.objectContaining({ attempt: 1, outcome: 'delivered', status: 200 })]);
      expect(settled.attemptLog[0]!.durationMs).toBeGreaterThan(3 * LEASE_MS); // it ran through several lease periods
    } finally {
      for (const w of workers) await w.stop(100);
      await store.close();
      await sink.close();
    }
  });

  it('abandons an attempt whose lease cannot be renewed while the lease still holds', async () => {
    const sink = await startWebhookSink(() => 'hang');
    const store = await storeWithOneDelivery();
    const rules = await rulesFor(sink.url);
    let claimedAt = 0;
    // The store refuses every renewal, as it does when another claim took the row.
    const refusing: Store = Object.assign(Object.create(store) as Store, {
      claimDueDeliveries: async (options: { limit: number; leaseMs: number }) => {
        // The lease starts at the store's now: its clock is the system clock.
        const now = Date.now();
        const claimed = await store.claimDueDeliveries(options);
        if (claimed.length > 0) claimedAt = now;
        return claimed;
      },
      renewLease: async () => false,
    });
    const w = worker(refusing, rules);
    try {
      w.start();
      const [request] = await sink.waitFor(1);
      const closedAt = await eventually(() => request!.closedAt, 5_000, 'the abandoned request closed');
      expect(closedAt - claimedAt).toBeLessThan(LEASE_MS);
      const [delivery] = (await store.listDeliveries({}, { limit: 1 })).items;
      const detail = await eventually(async () => {
        const d = await store.getDelivery(delivery!.id);
        return d && d.attemptLog.length > 0 ? d : null;
      });
      expect(detail.attemptLog).toEqual([expect.objectContaining({ errorCode: 'aborted', outcome: 'pending' })]);
    } finally {
      await w.stop(100);
      await store.close();
      await sink.close();
    }
  });
});
