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

describe('claiming due deliveries', () => {
  it('returns what an attempt needs: the event raw bytes or the transformed body, one lease token', async () => {
    const { store, eventId, now } = await storeWithTwoDeliveries();
    try {
      const claimed = await store.claimDueDeliveries({ now, limit: 10, leaseMs: 60_000 });
      expect(claimed).toHaveLength(2);
      const byRule = new Map(claimed.map((d) => [d.ruleId, d]));
      expect(byRule.get('untouched')).toEqual({
        id: expect.any(Number), eventId, ruleId: 'untouched', ruleSetHash: 'h1', contentType: 'application/json', attempts: 0,
        leaseToken: claimed[0]!.leaseToken, payload: RAW,
      });
      expect(byRule.get('transformed')!.payload.toString()).toBe('{"email":"a@b.c"}');
      expect(claimed[1]!.leaseToken).toBe(claimed[0]!.leaseToken);
      expect(claimed[0]!.leaseToken).toMatch(/^[0-9a-f-]{36}$/);
    } finally {
      await store.close();
    }
  });

  it('leases what it returns: nothing again until the lease ends, then the same rows with their attempt count', async () => {
    const { store, now } = await storeWithTwoDeliveries();
    try {
      const first = await store.claimDueDeliveries({ now, limit: 1, leaseMs: 60_000 });
      expect(first).toHaveLength(1);
      await store.recordAttempt(first[0]!.id, first[0]!.leaseToken, {
        attempt: 1, startedAt: now, durationMs: 2, urlOrigin: 'http://127.0.0.1:9', status: 500, errorCode: null, errorMessage: null,
        responseExcerpt: null, outcome: 'retry',
      }, { state: 'pending', nextAttemptAt: now + 1_000 });
      const second = await store.claimDueDeliveries({ now, limit: 10, leaseMs: 60_000 });
      expect(second).toHaveLength(1);
      expect(second[0]!.id).not.toBe(first[0]!.id);
      expect(await store.claimDueDeliveries({ now: now + 500, limit: 10, leaseMs: 60_000 })).toEqual([]);
      const retried = await store.claimDueDeliveries({ now: now + 1_000, limit: 10, leaseMs: 60_000 });
      expect(retried.map((d) => [d.id, d.attempts])).toEqual([[first[0]!.id, 1]]);
      // The other row is still leased until its lease ends, then due again with no attempt recorded.
      const expired = await store.claimDueDeliveries({ now: now + 60_001, limit: 10, leaseMs: 60_000 });
      expect(expired.map((d) => [d.id, d.attempts])).toEqual([[second[0]!.id, 0]]);
    } finally {
      await store.close();
    }
  });
  it('takes rows due at the same moment in the order they were created, rules interleaved, not rule by rule', async () => {
    const store = new SqliteStore({ dataDir: makeTempDir(), durability: 'normal' });
    try {
      const now = Date.now();
      const created: { id: number; ruleId: string }[] = [];
      for (const transferId of ['t-1', 't-2', 't-3']) {
        const { id: eventId } = await store.saveEvent({
          source: 'checkout', event: 'transfer:succeeded', transferId, checkoutId: null, email: null, walletAddress: null,
          validation: 'valid', receivedAt: now, headers: {}, body: RAW,
          deliveries: ['zeta', 'alpha'].map((ruleId) => ({ ruleId, ruleSetHash: 'h1', body: null, contentType: 'application/json' })),
        });
        const { items } = await store.listDeliveries({ eventId }, { limit: 10 });
        created.push(...items.map(({ id, ruleId }) => ({ id, ruleId })).reverse());
      }
      // One event's two deliveries first (a claim mixes destinations), not every "alpha" row before any "zeta".
      const claimed = await store.claimDueDeliveries({ now, limit: 2, leaseMs: 60_000 });
      expect(claimed.map(({ id, ruleId }) => ({ id, ruleId })).sort((a, b) => a.id - b.id)).toEqual(created.slice(0, 2));
    } finally {
      await store.close();
    }
  });

  it('records attempts waiting for their commit in the claim\'s own transaction', async () => {
    const { store, now } = await storeWithTwoDeliveries();
    try {
      const [first] = await store.claimDueDeliveries({ now, limit: 1, leaseMs: 60_000 });
      const recorded = store.recordAttempt(first!.id, first!.leaseToken, {
        attempt: 1, startedAt: now, durationMs: 2, urlOrigin: 'http://127.0.0.1:9', status: 200, errorCode: null, errorMessage: null,
        responseExcerpt: null, outcome: 'delivered',
      }, { state: 'delivered' });
      // Claimed in the same turn of the event loop as the record was submitted: before its own commit could run.
      const second = await store.claimDueDeliveries({ now, limit: 10, leaseMs: 60_000 });
      expect(store.db.prepare('SELECT count(*) AS n FROM delivery_attempts WHERE delivery_id = ?').get(first!.id)).toEqual({ n: 1 });
      expect(second).toHaveLength(1);
      expect(await recorded).toBe(true);
      expect((await store.getDelivery(first!.id))!.state).toBe('delivered');
    } finally {
      await store.close();
    }
  });
});
