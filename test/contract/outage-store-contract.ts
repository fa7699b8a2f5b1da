import { describe, expect, it } from 'vitest';
import type { Store } from '../../src/store/store.js';
import { attempt, event, forward, perTestClock, storeOpener, type StoreFactory } from './contract-helpers.js';

export function outageStoreContract(factory: StoreFactory): void {
  const clock = perTestClock();
  const open = storeOpener(factory, clock);

  describe('OutageStore: outages and redrive', () => {
    const DEST = 'http://127.0.0.1:9';

    /** One delivery of `ruleId`, attempted once and dead-lettered as `how` says; returns its id. */
    async function deadLetter(store: Store, ruleId: string, how: { retryable: boolean; status?: number; origin?: string }): Promise<number> {
      const { id: eventId } = await store.saveEvent(event(`t-${ruleId}-${Math.random()}`, { receivedAt: clock.now(), deliveries: [forward(ruleId)] }));
      const [delivery] = (await store.listDeliveries({ eventId }, { limit: 1 })).items;
      const claimed = (await store.claimDueDeliveries({ limit: 100, leaseMs: 60_000 })).find((d) => d.id === delivery!.id)!;
      const record = { ...attempt(1, 'dead', how.status ?? 503), urlOrigin: how.origin ?? DEST };
      await store.recordAttempt(claimed.id, claimed.leaseToken, record, { state: 'dead', reason: 'retries exhausted', retryable: how.retryable });
      return claimed.id;
    }

    it('opens one outage per destination, however often asked, and lists it while open', async () => {
      const store = await open();
      const first = await store.openOutage(DEST, 1_000);
      const again = await store.openOutage(DEST, 2_000);
      expect(first).toMatchObject({ opened: true, outage: { destination: DEST, openedAt: 1_000, closedAt: null, redriven: 0 } });
      expect(again).toEqual({ opened: false, outage: first.outage });
      expect(await store.listOutages({ open: true, limit: 10 })).toEqual([first.outage]);
    });

    it('closes once and redrives only the retryable dead letters of opted-in rules died during it, oldest first, spaced', async () => {
      const store = await open();
      const before = await deadLetter(store, 'a', { retryable: true }); // died before the outage began
      clock.advance(5);
      const { outage } = await store.openOutage(DEST, clock.now());
      const first = await deadLetter(store, 'a', { retryable: true });
      const gone = await deadLetter(store, 'a', { retryable: false, status: 404 });
      const elsewhere = await deadLetter(store, 'a', { retryable: true, origin: 'http://127.0.0.1:10' });
      const notOptedIn = await deadLetter(store, 'b', { retryable: true });
      const second = await deadLetter(store, 'a', { retryable: true });
      clock.advance(5);
      const closedAt = clock.now();
      const [one, other] = await Promise.all([store.closeOutage(DEST, new Map([['a', 100]])), store.closeOutage(DEST, new Map([['a', 100]]))]);
      const closed = (one ?? other)!;
      expect([one, other].filter((c) => c === null)).toHaveLength(1); // exactly one caller redrives
      expect(closed.redriven).toEqual([first, second]);
      expect(closed.outage).toMatchObject({ id: outage.id, closedAt, redriven: 2 });
      for (const id of [before, gone, elsewhere, notOptedIn]) expect((await store.getDelivery(id))!.state).toBe('dead');
      expect(await store.getDelivery(first)).toMatchObject({ state: 'pending', deadReason: null, redrives: [{ outageId: outage.id, kind: 'redrive', redrivenAt: closedAt, dueAt: closedAt }] });
      expect((await store.getDelivery(second))!.redrives).toEqual([{ outageId: outage.id, kind: 'redrive', redrivenAt: closedAt, dueAt: closedAt + 100 }]);
      // Same delivery, a new pass of its schedule: the claim says how many attempts came before it.
      clock.set(closedAt);
      const claimed = await store.claimDueDeliveries({ limit: 10, leaseMs: 60_000 });
      expect(claimed.map((d) => [d.id, d.attempts, d.passOffset])).toEqual([[first, 1, 1]]);
      clock.set(closedAt + 100);
      expect((await store.claimDueDeliveries({ limit: 10, leaseMs: 60_000 })).map((d) => d.id)).toEqual([second]);
      expect(await store.listOutages({ open: true, limit: 10 })).toEqual([]);
      expect(await store.closeOutage(DEST, new Map([['a', 100]]))).toBeNull();
    });

    it('puts a redriven delivery of an ordered rule at the back of its key', async () => {
      const store = await open();
      await store.openOutage(DEST, clock.now() - 1);
      const ids: number[] = [];
      for (const i of [1, 2]) {
        const { id: eventId } = await store.saveEvent(event(`ordered-redrive-${i}-${Math.random()}`, { receivedAt: clock.now(), deliveries: [forward('a', { orderKey: 'K' })] }));
        ids.push((await store.listDeliveries({ eventId }, { limit: 1 })).items[0]!.id);
      }
      const [head] = await store.claimDueDeliveries({ limit: 100, leaseMs: 60_000 });
      expect(head!.id).toBe(ids[0]);
      await store.recordAttempt(head!.id, head!.leaseToken, { ...attempt(1, 'dead', 503), urlOrigin: DEST }, { state: 'dead', reason: 'retries exhausted', retryable: true });
      const closedAt = Date.now();
      clock.set(closedAt);
      expect((await store.closeOutage(DEST, new Map([['a', 0]])))!.redriven).toEqual([ids[0]]);
      // The redriven head now waits behind the row that was queued after it.
      clock.set(closedAt + 120_000);
      const next = await store.claimDueDeliveries({ limit: 100, leaseMs: 60_000 });
      expect(next.map((d) => d.id)).toEqual([ids[1]]);
    });

    it('probes an open outage with its oldest dead letter, once per interval over every caller', async () => {
      const store = await open();
      const { outage } = await store.openOutage(DEST, clock.now() - 1);
      const oldest = await deadLetter(store, 'a', { retryable: true });
      await deadLetter(store, 'a', { retryable: true });
      const now = Date.now();
      clock.set(now);
      const probes = await Promise.all([1, 2].map(() => store.probeOutage(outage.id, { minIntervalMs: 60_000, ruleIds: ['a'] })));
      expect(probes.sort()).toEqual([null, oldest].sort());
      expect(await store.getDelivery(oldest)).toMatchObject({ state: 'pending', redrives: [{ outageId: outage.id, kind: 'probe' }] });
      clock.set(now + 60_000);
      expect(await store.probeOutage(outage.id, { minIntervalMs: 60_000, ruleIds: ['b'] })).toBeNull(); // no dead letter of rule b
      expect(await store.listOutages({ limit: 10 })).toMatchObject([{ id: outage.id, lastProbeAt: now + 60_000, redriven: 1 }]);
    });
  });
}
