import { describe, expect, it } from 'vitest';
import type { Store } from '../../src/store/store.js';
import { attempt, event, forward, RAW, perTestClock, storeOpener, type StoreFactory } from './contract-helpers.js';

export function deliveryQueueContract(factory: StoreFactory): void {
  const clock = perTestClock();
  const open = storeOpener(factory, clock);

  describe('DeliveryQueue: claims, attempts and leases', () => {
    async function storeWithTwoDeliveries(): Promise<{ store: Store; eventId: number; now: number }> {
      const store = await open();
      const now = Date.now();
      const { id: eventId } = await store.saveEvent(event('t-1', {
        receivedAt: now, body: RAW,
        deliveries: [forward('untouched'), forward('transformed', { body: Buffer.from('{"email":"a@b.c"}') })],
      }));
      return { store, eventId, now };
    }

    it('claims what an attempt needs: the event raw bytes or the transformed body, one lease token', async () => {
      const { store, eventId, now } = await storeWithTwoDeliveries();
      clock.set(now);
      const claimed = await store.claimDueDeliveries({ limit: 10, leaseMs: 60_000 });
      expect(claimed).toHaveLength(2);
      const byRule = new Map(claimed.map((d) => [d.ruleId, d]));
      expect(byRule.get('untouched')).toEqual({
        id: expect.any(Number), eventId, ruleId: 'untouched', ruleSetHash: 'h1', contentType: 'application/json', attempts: 0, passOffset: 0, leaseToken: claimed[0]!.leaseToken,
        orderKey: null, blockedSince: null, lastError: null, payload: RAW, hasBody: false,
      });
      expect(byRule.get('transformed')!.payload.toString()).toBe('{"email":"a@b.c"}');
      expect(byRule.get('transformed')!.hasBody).toBe(true);
      expect(claimed[1]!.leaseToken).toBe(claimed[0]!.leaseToken);
      expect(claimed[0]!.leaseToken).toMatch(/^[0-9a-f-]{36}$/);
    });

    it('leases what it returns: nothing again until the lease ends, then the same rows with their attempt count', async () => {
      const { store, now } = await storeWithTwoDeliveries();
      clock.set(now);
      const first = await store.claimDueDeliveries({ limit: 1, leaseMs: 60_000 });
      expect(first).toHaveLength(1);
      await store.recordAttempt(first[0]!.id, first[0]!.leaseToken, attempt(1, 'pending', 500), { state: 'pending', nextAttemptAt: now + 1_000 });
      clock.set(now);
      const second = await store.claimDueDeliveries({ limit: 10, leaseMs: 60_000 });
      expect(second).toHaveLength(1);
      expect(second[0]!.id).not.toBe(first[0]!.id);
      clock.set(now + 500);
      expect(await store.claimDueDeliveries({ limit: 10, leaseMs: 60_000 })).toEqual([]);
      expect(await store.nextDueAt()).toBe(now + 1_000);
      clock.set(now + 1_000);
      const retried = await store.claimDueDeliveries({ limit: 10, leaseMs: 60_000 });
      expect(retried.map((d) => [d.id, d.attempts])).toEqual([[first[0]!.id, 1]]);
      // The other row is still leased until its lease ends, then due again with no attempt recorded.
      clock.set(now + 60_001);
      const expired = await store.claimDueDeliveries({ limit: 10, leaseMs: 60_000 });
      expect(expired.map((d) => [d.id, d.attempts])).toEqual([[second[0]!.id, 0]]);
    });

    it('takes rows due at the same moment in the order they were created, rules interleaved, not rule by rule', async () => {
      const store = await open();
      const now = Date.now();
      const created: { id: number; ruleId: string }[] = [];
      for (const transferId of ['t-1', 't-2', 't-3']) {
        const { id: eventId } = await store.saveEvent(event(transferId, { receivedAt: now, deliveries: [forward('zeta'), forward('alpha')] }));
        const { items } = await store.listDeliveries({ eventId }, { limit: 10 });
        created.push(...items.map(({ id, ruleId }) => ({ id, ruleId })).reverse());
      }
      expect(created.map((c) => c.ruleId)).toEqual(['zeta', 'alpha', 'zeta', 'alpha', 'zeta', 'alpha']);
      clock.set(now);
      const claimed = await store.claimDueDeliveries({ limit: 2, leaseMs: 60_000 });
      expect(claimed.map(({ id, ruleId }) => ({ id, ruleId })).sort((a, b) => a.id - b.id)).toEqual(created.slice(0, 2));
    });

    it('records every attempt, but moves the delivery on only while the lease is the attempt\'s', async () => {
      const { store, now } = await storeWithTwoDeliveries();
      clock.set(now);
      const [stale] = await store.claimDueDeliveries({ limit: 1, leaseMs: 1_000 });
      // The lease ran out: claimed again, under a new lease.
      clock.set(now + 2_000);
      const current = (await store.claimDueDeliveries({ limit: 10, leaseMs: 60_000 })).find((d) => d.id === stale!.id);
      expect(current!.leaseToken).not.toBe(stale!.leaseToken);
      expect(await store.recordAttempt(stale!.id, stale!.leaseToken, attempt(1, 'delivered'), { state: 'delivered' })).toBe(false);
      expect((await store.getDelivery(stale!.id))!).toMatchObject({ state: 'pending', attempts: 0, attemptLog: [expect.objectContaining({ attempt: 1, outcome: 'delivered' })] });
      expect(await store.recordAttempt(current!.id, current!.leaseToken, attempt(1, 'dead', 410), { state: 'dead', reason: 'gone' })).toBe(true);
      const detail = (await store.getDelivery(current!.id))!;
      expect(detail).toMatchObject({ state: 'dead', attempts: 1, lastStatus: 410, deadReason: 'gone', nextAttemptAt: null });
      expect(detail.attemptLog.map((a) => a.status)).toEqual([200, 410]);
      expect(await store.getDelivery(current!.id + 1000)).toBeNull();
    });

    it('keeps a rendered body under the lease only; later claims send it', async () => {
      const { store, now } = await storeWithTwoDeliveries();
      clock.set(now);
      const claimed = await store.claimDueDeliveries({ limit: 10, leaseMs: 1_000 });
      const untouched = claimed.find((d) => d.ruleId === 'untouched')!;
      const rendered = { body: Buffer.from('{"rendered":true}'), contentType: 'application/vnd.example+json' };
      expect(await store.saveRenderedBody(untouched.id, 'not-the-lease', rendered)).toBe(false);
      expect(await store.saveRenderedBody(untouched.id, untouched.leaseToken, rendered)).toBe(true);
      clock.set(now + 2_000);
      const again = (await store.claimDueDeliveries({ limit: 10, leaseMs: 60_000 })).find((d) => d.id === untouched.id)!;
      expect(again).toMatchObject({ payload: rendered.body, contentType: rendered.contentType, hasBody: true });
      expect(await store.saveRenderedBody(untouched.id, untouched.leaseToken, { body: Buffer.from('{}'), contentType: 'application/json' })).toBe(false);
    });

    it('gives a claimed row back without an attempt, due again when asked', async () => {
      const { store, now } = await storeWithTwoDeliveries();
      clock.set(now);
      const claimed = await store.claimDueDeliveries({ limit: 10, leaseMs: 60_000 });
      await store.releaseDelivery(claimed[0]!.id, claimed[0]!.leaseToken, now + 200);
      await store.releaseDelivery(claimed[1]!.id, 'not-the-lease', now + 200); // someone else's lease: no effect
      clock.set(now + 100);
      expect(await store.claimDueDeliveries({ limit: 10, leaseMs: 60_000 })).toEqual([]);
      clock.set(now + 200);
      const again = await store.claimDueDeliveries({ limit: 10, leaseMs: 60_000 });
      expect(again.map((d) => [d.id, d.attempts])).toEqual([[claimed[0]!.id, 0]]);
    });

    it('takes due times with a fraction of a millisecond (a jittered retry time) when giving a row back or recording an attempt', async () => {
      const { store, now } = await storeWithTwoDeliveries();
      clock.set(now);
      const claimed = await store.claimDueDeliveries({ limit: 10, leaseMs: 60_000 });
      await store.releaseDelivery(claimed[0]!.id, claimed[0]!.leaseToken, now + 200.37);
      expect(await store.recordAttempt(claimed[1]!.id, claimed[1]!.leaseToken, attempt(1, 'pending', 503), { state: 'pending', nextAttemptAt: now + 300.61 })).toBe(true);
      clock.set(now + 301);
      const again = await store.claimDueDeliveries({ limit: 10, leaseMs: 60_000 });
      expect(again.map((d) => [d.id, d.attempts])).toEqual([[claimed[0]!.id, 0], [claimed[1]!.id, 1]]);
    });

    it('claims with the last attempt\'s error, and keeps a failure outside the schedule out of its count', async () => {
      const { store, now } = await storeWithTwoDeliveries();
      clock.set(now);
      const [first] = await store.claimDueDeliveries({ limit: 1, leaseMs: 60_000 });
      const lost = { ...attempt(1, 'pending', null), errorCode: 'ECONNRESET', errorMessage: 'read ECONNRESET' };
      expect(await store.recordAttempt(first!.id, first!.leaseToken, lost, { state: 'pending', nextAttemptAt: now, outsideSchedule: true })).toBe(true);
      const [second] = (await store.claimDueDeliveries({ limit: 10, leaseMs: 60_000 })).filter((d) => d.id === first!.id);
      expect(second).toMatchObject({ attempts: 1, passOffset: 1, lastError: 'ECONNRESET: read ECONNRESET' });
      // A failure on the schedule counts: the offset stays; an answer clears the error.
      expect(await store.recordAttempt(first!.id, second!.leaseToken, attempt(2, 'pending', 503), { state: 'pending', nextAttemptAt: now })).toBe(true);
      const [third] = await store.claimDueDeliveries({ limit: 10, leaseMs: 60_000 });
      expect(third).toMatchObject({ id: first!.id, attempts: 2, passOffset: 1, lastError: null });
      expect((await store.getDelivery(first!.id))!.attemptLog.map((a) => [a.attempt, a.errorCode, a.status])).toEqual([[1, 'ECONNRESET', null], [2, null, 503]]);
    });

    it('keeps dead-on-arrival deliveries out of claims, and counts the outbox', async () => {
      const store = await open();
      const now = Date.now();
      await store.saveEvent(event('t-1', { receivedAt: now, deliveries: [forward('ok'), forward('later', { delayMs: 5_000 }), forward('bad', { deadReason: 'transform failed' })] }));
      clock.set(now + 1_000);
      expect(await store.outboxStats()).toEqual({ pending: 2, due: 1, dead: 1, oldestDueAgeMs: 1_000 });
      clock.set(now);
      expect((await store.claimDueDeliveries({ limit: 10, leaseMs: 60_000 })).map((d) => d.ruleId)).toEqual(['ok']);
      expect(await store.nextDueAt()).toBe(now + 5_000);
      expect((await store.listDeliveries({ state: 'dead' }, { limit: 10 })).items).toEqual([
        expect.objectContaining({ ruleId: 'bad', state: 'dead', deadReason: 'transform failed', nextAttemptAt: null, origin: 'ingest' }),
      ]);
      const empty = await open();
      expect(await empty.nextDueAt()).toBeNull();
      clock.set(now);
      expect(await empty.outboxStats()).toEqual({ pending: 0, due: 0, dead: 0, oldestDueAgeMs: 0 });
    });

  });

  describe('DeliveryQueue: ordered delivery per key', () => {
    /** Saves one event per key in order, each with one delivery of `rule` keyed so; returns the delivery ids. */
    async function saveKeyed(store: Store, now: number, keys: (string | undefined)[], rule = 'ordered'): Promise<number[]> {
      const ids: number[] = [];
      for (const [i, key] of keys.entries()) {
        const { id: eventId } = await store.saveEvent(event(`k-${rule}-${i}-${now}`, { receivedAt: now, deliveries: [forward(rule, key === undefined ? {} : { orderKey: key })] }));
        ids.push((await store.listDeliveries({ eventId }, { limit: 1 })).items[0]!.id);
      }
      return ids;
    }
    const claimIds = async (store: Store, now: number, leaseMs = 60_000): Promise<number[]> => {
      clock.set(now);
      return (await store.claimDueDeliveries({ limit: 100, leaseMs })).map((d) => d.id).sort((a, b) => a - b);
    };

    it('claims only the head of each key: the next row of a key after the previous one is settled', async () => {
      const store = await open();
      const now = Date.now();
      const [a1, b1, a2, none1, a3, b2, none2] = await saveKeyed(store, now, ['A', 'B', 'A', undefined, 'A', 'B', undefined]);
      expect((await store.getDelivery(a1!))!.orderKey).toBe('A');
      expect((await store.getDelivery(none1!))!.orderKey).toBeNull();
      clock.set(now);
      const first = await store.claimDueDeliveries({ limit: 100, leaseMs: 60_000 });
      expect(first.map((d) => d.id).sort((x, y) => x - y)).toEqual([a1, b1, none1, none2]);
      // Nothing more while the heads are leased, even when their followers are due.
      expect(await claimIds(store, now + 10)).toEqual([]);
      const byId = new Map(first.map((d) => [d.id, d]));
      await store.recordAttempt(a1!, byId.get(a1!)!.leaseToken, attempt(1, 'delivered'), { state: 'delivered' });
      await store.recordAttempt(b1!, byId.get(b1!)!.leaseToken, attempt(1, 'dead', 410), { state: 'dead', reason: 'gone' });
      expect(await claimIds(store, now + 20)).toEqual([a2, b2]);
      // Expired leases come back (a crashed worker's rows); a3 still waits, as a2's lease lives.
      expect(await claimIds(store, now + 60_001)).toEqual([none1, none2]);
      // a2's lease ran out with no attempt recorded: a2 again, never a3 beside it.
      expect(await claimIds(store, now + 60_021)).toEqual([a2, b2]);
      expect(a3).toBeGreaterThan(a2!);
    });

    it('keeps a failing head at the front: its key waits, other keys and rules flow, nothing earlier wakes the worker', async () => {
      const store = await open();
      const now = Date.now();
      const [a1, a2, b1] = await saveKeyed(store, now, ['A', 'A', 'B']);
      const [other1, other2] = await saveKeyed(store, now, ['A', 'A'], 'other-rule');
      clock.set(now);
      const first = await store.claimDueDeliveries({ limit: 100, leaseMs: 60_000 });
      expect(first.map((d) => d.id).sort((x, y) => x - y)).toEqual([a1, b1, other1]);
      const head = first.find((d) => d.id === a1)!;
      await store.recordAttempt(a1!, head.leaseToken, attempt(1, 'pending', 503), { state: 'pending', nextAttemptAt: now + 5_000 });
      for (const d of first.filter((x) => x.id !== a1)) await store.recordAttempt(d.id, d.leaseToken, attempt(1, 'delivered'), { state: 'delivered' });
      expect(await claimIds(store, now + 100)).toEqual([other2]);
      // a2 is due but waits behind a1: the next due time is a1's retry, not a2's.
      expect(await store.nextDueAt()).toBe(now + 5_000);
      clock.set(now + 5_000);
      const retry = await store.claimDueDeliveries({ limit: 100, leaseMs: 60_000 });
      expect(retry.map((d) => [d.id, d.attempts, d.blockedSince])).toEqual([[a1, 1, expect.any(Number)]]);
      await store.recordAttempt(a1!, retry[0]!.leaseToken, attempt(2, 'delivered'), { state: 'delivered' });
      expect(await claimIds(store, now + 5_001)).toEqual([a2]);
    });

    it('lists blocked keys with their head and how many wait behind it, and counts them per rule', async () => {
      const store = await open();
      const now = Date.now();
      const [a1] = await saveKeyed(store, now, ['A', 'A', 'A', 'B']);
      clock.set(now);
      const claimed = await store.claimDueDeliveries({ limit: 100, leaseMs: 60_000 });
      const failedAt = now - 50;
      for (const d of claimed) {
        const failed = { ...attempt(1, 'pending', 503), startedAt: failedAt };
        if (d.id === a1) await store.recordAttempt(d.id, d.leaseToken, failed, { state: 'pending', nextAttemptAt: now + 9_000 });
        else await store.recordAttempt(d.id, d.leaseToken, attempt(1, 'delivered'), { state: 'delivered' });
      }
      expect(await store.listBlockedKeys('ordered', 10)).toEqual([{
        key: 'A',
        head: { deliveryId: a1, eventId: expect.any(Number), attempts: 1, blockedSince: failedAt, nextAttemptAt: now + 9_000, lastStatus: 503, lastError: null },
        waiting: 2,
      }]);
      expect(await store.listBlockedKeys('another', 10)).toEqual([]);
      expect(Object.fromEntries(await store.blockedKeyCounts())).toEqual({ ordered: 1 });
      // A second failure keeps the time the key was first blocked.
      clock.set(now + 9_000);
      const [again] = await store.claimDueDeliveries({ limit: 100, leaseMs: 60_000 });
      expect(again!.blockedSince).toBe(failedAt);
      await store.recordAttempt(again!.id, again!.leaseToken, attempt(2, 'dead', 400), { state: 'dead', reason: 'bad request' });
      expect(await store.blockedKeyCounts()).toEqual(new Map());
    });

    it('puts a retried or bulk-retried delivery, and a replay, at the back of its key', async () => {
      const store = await open();
      const now = Date.now();
      const [a1, a2] = await saveKeyed(store, now, ['A', 'A']);
      clock.set(now);
      const [head] = await store.claimDueDeliveries({ limit: 100, leaseMs: 60_000 });
      await store.recordAttempt(a1!, head!.leaseToken, attempt(1, 'dead', 410), { state: 'dead', reason: 'gone' });
      // a1 retried while a2 is pending: a1 now waits behind a2.
      clock.set(now);
      expect(await store.retryDelivery(a1!)).toBe(true);
      expect((await store.getDelivery(a1!))!).toMatchObject({ state: 'pending' });
      clock.set(now + 1);
      const next = await store.claimDueDeliveries({ limit: 100, leaseMs: 60_000 });
      expect(next.map((d) => d.id)).toEqual([a2]);
      // A replay of a2's event joins behind a1.
      const replayed = await store.createDeliveries((await store.getDelivery(a2!))!.eventId, [forward('ordered', { orderKey: 'A' })], 'replay');
      await store.recordAttempt(a2!, next[0]!.leaseToken, attempt(1, 'dead', 410), { state: 'dead', reason: 'gone' });
      expect(await claimIds(store, now + 2)).toEqual([a1]);
      clock.set(now + 60_003);
      const [retriedHead] = await store.claimDueDeliveries({ limit: 100, leaseMs: 60_000 });
      expect(retriedHead!.id).toBe(a1);
      await store.recordAttempt(a1!, retriedHead!.leaseToken, attempt(2, 'delivered'), { state: 'delivered' });
      // Bulk retry of a2 (dead) while the replay is pending: a2 goes behind the replay.
      expect(await store.retryDeadDeliveries({ ruleId: 'ordered' }, 10)).toEqual([a2]);
      expect(await claimIds(store, now + 60_004)).toEqual(replayed);
    });

    it('renews a live lease and refuses a lost one', async () => {
      const store = await open();
      const now = Date.now();
      await saveKeyed(store, now, ['A', 'A']);
      clock.set(now);
      const [head] = await store.claimDueDeliveries({ limit: 100, leaseMs: 1_000 });
      expect(await store.renewLease(head!.id, head!.leaseToken, { leaseMs: 120_000 })).toBe(true);
      // The renewed lease outlives the first one: nobody claims the head or its follower at its old end.
      expect(await claimIds(store, Date.now() + 5_000)).toEqual([]);
      expect(await store.renewLease(head!.id, 'not-the-lease', { leaseMs: 120_000 })).toBe(false);
      await store.recordAttempt(head!.id, head!.leaseToken, attempt(1, 'delivered'), { state: 'delivered' });
      expect(await store.renewLease(head!.id, head!.leaseToken, { leaseMs: 120_000 })).toBe(false);
    });
  });
}
