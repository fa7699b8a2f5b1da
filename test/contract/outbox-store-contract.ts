import { describe, expect, it } from 'vitest';
import { attempt, event, forward, perTestClock, storeOpener, type StoreFactory } from './contract-helpers.js';

export function outboxStoreContract(factory: StoreFactory): void {
  const clock = perTestClock();
  const open = storeOpener(factory, clock);

  describe('OutboxStore and BulkStore: pages, replays, retries and counts', () => {
    it('pages deliveries newest first by filter', async () => {
      const store = await open();
      const { id: eventId } = await store.saveEvent(event('t-1', { deliveries: ['a', 'b', 'a', 'c'].map((r) => forward(r)) }));
      const page1 = await store.listDeliveries({ eventId }, { limit: 3 });
      expect(page1.items.map((d) => d.ruleId)).toEqual(['c', 'a', 'b']);
      const page2 = await store.listDeliveries({ eventId }, { limit: 3, before: page1.nextCursor! });
      expect(page2).toEqual({ items: [expect.objectContaining({ ruleId: 'a' })], nextCursor: null });
      expect((await store.listDeliveries({ ruleId: 'a', state: 'pending' }, { limit: 10 })).items).toHaveLength(2);
    });

    it('replays into new rows, retries a settled delivery once, and bulk-retries dead letters in id order', async () => {
      const store = await open();
      const now = Date.now();
      const { id: eventId } = await store.saveEvent(event('t-1', { deliveries: [forward('bad', { deadReason: 'x' }), forward('bad', { deadReason: 'y' })] }));
      const other = await store.saveEvent(event('t-2', { deliveries: [forward('other', { deadReason: 'z' })] }));
      let due = 0;
      store.onDeliveriesDue(() => {
        due += 1;
      });
      const replayed = await store.createDeliveries(eventId, [forward('fwd')], 'replay');
      expect((await store.getDelivery(replayed[0]!))!).toMatchObject({ origin: 'replay', state: 'pending', eventId });
      expect(await store.createDeliveriesForEvents([{ eventId, deliveries: [forward('fwd')] }, { eventId: other.id, deliveries: [forward('fwd'), forward('x')] }], 'replay')).toBe(3);
      expect(await store.countDeadDeliveries({ ruleId: 'bad' })).toBe(2);
      expect(await store.countDeadDeliveries({})).toBe(3);
      const retried = await store.retryDeadDeliveries({ ruleId: 'bad' }, 1);
      expect(retried).toHaveLength(1);
      expect(await store.retryDeadDeliveries({ ruleId: 'bad', afterId: retried[0]! }, 10)).toHaveLength(1);
      const [otherDead] = (await store.listDeliveries({ state: 'dead' }, { limit: 10 })).items;
      clock.set(now);
      expect(await store.retryDelivery(otherDead!.id)).toBe(true);
      clock.set(now);
      expect(await store.retryDelivery(otherDead!.id)).toBe(false); // already pending
      expect(await store.countDeadDeliveries({})).toBe(0);
      expect((await store.getDelivery(otherDead!.id))!).toMatchObject({ state: 'pending', deadReason: null, nextAttemptAt: now });
      expect(due).toBe(5);
    });

    it('counts deliveries per state of each rule, zeros for a rule without any', async () => {
      const store = await open();
      const now = Date.now();
      await store.saveEvent(event('t-1', { receivedAt: now, deliveries: [forward('a'), forward('a'), forward('a', { deadReason: 'x' }), forward('b')] }));
      clock.set(now);
      const [claimed] = await store.claimDueDeliveries({ limit: 1, leaseMs: 60_000 });
      await store.recordAttempt(claimed!.id, claimed!.leaseToken, attempt(1, 'delivered'), { state: 'delivered' });
      const counts = await store.deliveryCountsByRule(['a', 'b', 'none']);
      expect(Object.fromEntries(counts)).toEqual({
        a: { pending: 1, delivered: 1, dead: 1 }, b: { pending: 1, delivered: 0, dead: 0 }, none: { pending: 0, delivered: 0, dead: 0 },
      });
    });

    it('counts deliveries per state of each event of a page, zeros for an event without any', async () => {
      const store = await open();
      const now = Date.now();
      const first = await store.saveEvent(event('t-1', { receivedAt: now, deliveries: [forward('a'), forward('b', { deadReason: 'x' })] }));
      const second = await store.saveEvent(event('t-2', { receivedAt: now }));
      clock.set(now);
      const [claimed] = await store.claimDueDeliveries({ limit: 1, leaseMs: 60_000 });
      await store.recordAttempt(claimed!.id, claimed!.leaseToken, attempt(1, 'delivered'), { state: 'delivered' });
      const counts = await store.deliveryCountsByEvent([first.id, second.id]);
      expect(counts.get(first.id)).toEqual({ pending: 0, delivered: 1, dead: 1 });
      expect(counts.get(second.id)).toEqual({ pending: 0, delivered: 0, dead: 0 });
      expect((await store.deliveryCountsByEvent([])).size).toBe(0);
    });
  });
}
