import { afterAll, describe, expect, it } from 'vitest';
import { SqliteStore } from '../../../src/store/sqlite/sqlite-store.js';
import { makeTempDir, removeTempDirs } from '../../helpers/temp-dir.js';

afterAll(() => removeTempDirs());

const RAW = Buffer.from('{"event":"transfer:succeeded","result":{"id":"t-1"}}  ');

async function storeWithTwoDeliveries(): Promise<{ store: SqliteStore; eventId: number; now: number }> {
  const store = new SqliteStore({ dataDir: makeTempDir(), durability: 'normal' });
  const now = Date.now();
  const { id: eventId } = await store.saveEvent({
    source: 'checkout', event: 'transfer:succeeded', transferId: 't-1', checkoutId: null, email: null, walletAddress: null,
    validation: 'valid', receivedAt: now, headers: {}, body: RAW,
    deliveries: [
      { ruleId: 'untouched', ruleSetHash: 'h1', body: null, contentType: 'application/json' },
      { ruleId: 'transformed', ruleSetHash: 'h1', body: Buffer.from('{"email":"a@b.c"}'), contentType: 'application/json' },
    ],
  });
  return { store, eventId, now };
}

// Claim and lease behaviour every store shares is in the contract suite (test/contract/).
describe('claiming due deliveries on SQLite', () => {
  it('records attempts waiting for their commit in the claim\'s own transaction', async () => {
    const { store, now } = await storeWithTwoDeliveries();
    try {
      const [first] = await store.claimDueDeliveries({ limit: 1, leaseMs: 60_000 });
      const recorded = store.recordAttempt(first!.id, first!.leaseToken, {
        attempt: 1, startedAt: now, durationMs: 2, urlOrigin: 'http://127.0.0.1:9', status: 200, errorCode: null, errorMessage: null,
        responseExcerpt: null, outcome: 'delivered',
      }, { state: 'delivered' });
      // Claimed in the same turn of the event loop as the record was submitted: before its own commit could run.
      const second = await store.claimDueDeliveries({ limit: 10, leaseMs: 60_000 });
      expect(store.db.prepare('SELECT count(*) AS n FROM delivery_attempts WHERE delivery_id = ?').get(first!.id)).toEqual({ n: 1 });
      expect(second).toHaveLength(1);
      expect(await recorded).toBe(true);
      expect((await store.getDelivery(first!.id))!.state).toBe('delivered');
    } finally {
      await store.close();
    }
  });
});
