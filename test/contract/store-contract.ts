import { afterEach, describe, expect, it } from 'vitest';
import { HookrelayError } from '../../src/errors.js';
import type { AttemptRecord, EventSearch, NewDelivery, NewEvent, Store, StreamPosition } from '../../src/store/store.js';

/**
 * What every Store promises, checked through the interface alone: no test here reaches into a backend's
 * connection or files. Each backend runs it with a factory that opens a fresh, empty store per test
 * (test/contract/sqlite.test.ts, postgres.test.ts).
 */
export interface StoreFactory {
  /** A new store on fresh, empty storage; the suite closes it. */
  open(): Promise<Store>;
}

const RAW = Buffer.from('{"event":"transfer:succeeded","result":{"id":"t-1"}}  ');

function event(transferId: string, overrides: Partial<NewEvent> = {}): NewEvent {
  return {
    source: 'checkout', event: 'transfer:succeeded', transferId, checkoutId: null, email: null, walletAddress: null, validation: 'valid',
    receivedAt: Date.now(), headers: {}, body: Buffer.from(`{"event":"transfer:succeeded","result":{"id":"${transferId}"}}`), ...overrides,
  };
}

function forward(ruleId: string, overrides: Partial<NewDelivery> = {}): NewDelivery {
  return { ruleId, ruleSetHash: 'h1', body: null, contentType: 'application/json', ...overrides };
}

function attempt(n: number, outcome: AttemptRecord['outcome'], status: number | null = 200): AttemptRecord {
  return { attempt: n, startedAt: Date.now(), durationMs: 2, urlOrigin: 'http://127.0.0.1:9', status, errorCode: null, errorMessage: null, responseExcerpt: null, outcome };
}

export function storeContract(factory: StoreFactory): void {
  const opened: Store[] = [];
  afterEach(async () => {
    for (const store of opened.splice(0)) await store.close();
  });
  const open = async (): Promise<Store> => {
    const store = await factory.open();
    opened.push(store);
    return store;
  };

  describe('saving events', () => {
    it('stores the first copy of a transfer with its deliveries; a repeat only counts and dates itself', async () => {
      const store = await open();
      const copy = (receivedAt: number): NewEvent => event('transfer-1', { receivedAt, body: Buffer.from(`{"n":${receivedAt}}`), deliveries: [forward('fwd')] });
      const first = await store.saveEvent(copy(1_000));
      expect(first).toEqual({ id: expect.any(Number), duplicate: false, receivedCount: 1 });
      const repeats = await Promise.all([store.saveEvent(copy(5_000)), store.saveEvent(copy(9_000))]);
      expect(repeats).toEqual([
        { id: first.id, duplicate: true, receivedCount: 2 },
        { id: first.id, duplicate: true, receivedCount: 3 },
      ]);
      const stored = (await store.getEvent(first.id))!;
      expect(stored).toMatchObject({ receivedAt: 1_000, lastReceivedAt: 9_000, receivedCount: 3 });
      expect(stored.body.toString()).toBe('{"n":1000}'); // the first bytes are kept, not overwritten
      expect((await store.listDeliveries({ eventId: first.id }, { limit: 10 })).items).toHaveLength(1); // never planned twice
    });

    it('stores many concurrent copies of one transfer once, among other events, each answered', async () => {
      const store = await open();
      const saves = await Promise.all(
        Array.from({ length: 40 }, (_, i) => store.saveEvent(event(i % 2 === 0 ? 'shared' : `own-${i}`, { deliveries: [forward('fwd')] }))),
      );
      const shared = saves.filter((_, i) => i % 2 === 0);
      expect(shared.filter((s) => !s.duplicate)).toHaveLength(1);
      expect(new Set(shared.map((s) => s.id)).size).toBe(1);
      expect(shared.map((s) => s.receivedCount).sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
      expect(await store.countEvents({})).toBe(21);
      expect((await store.listDeliveries({}, { limit: 100 })).items).toHaveLength(21);
    });

    it('keeps the raw body byte for byte (every byte value, invalid UTF-8) and the headers', async () => {
      const store = await open();
      const body = Buffer.concat([Buffer.from(Array.from({ length: 256 }, (_, i) => i)), Buffer.from([0xff, 0xfe, 0x00, 0xc3])]);
      const headers = { 'content-type': 'application/json', 'x-odd': 'ünïcode "quoted" \\ back' };
      const { id } = await store.saveEvent(event('bytes', { body, headers, email: 'Buyer@Example.com', walletAddress: '0xAbC', checkoutId: 'co-1' }));
      const stored = (await store.getEvent(id))!;
      expect(Buffer.compare(stored.body, body)).toBe(0);
      expect(stored).toMatchObject({ headers, email: 'Buyer@Example.com', walletAddress: '0xAbC', checkoutId: 'co-1', validation: 'valid', importedAt: null });
      expect(await store.getEvent(id + 1000)).toBeNull();
    });

    it('tells who listens that deliveries fell due after a new event with deliveries, not after a repeat', async () => {
      const store = await open();
      let calls = 0;
      const stop = store.onDeliveriesDue(() => {
        calls += 1;
      });
      await store.saveEvent(event('quiet'));
      expect(calls).toBe(0);
      await store.saveEvent(event('due', { deliveries: [forward('fwd')] }));
      expect(calls).toBe(1);
      await store.saveEvent(event('due', { deliveries: [forward('fwd')] }));
      expect(calls).toBe(1);
      stop();
      await store.saveEvent(event('due-2', { deliveries: [forward('fwd')] }));
      expect(calls).toBe(1);
    });

    it('tells who listens that new events were stored (ingest and import), not after a repeat', async () => {
      const store = await open();
      let calls = 0;
      const stop = store.onEventsStored(() => {
        calls += 1;
      });
      await store.saveEvent(event('first'));
      expect(calls).toBe(1);
      await store.saveEvent(event('first'));
      expect(calls).toBe(1);
      const { receivedAt: _at, deliveries: _none, ...imported } = event('imported');
      await store.importEvents([{ ...imported, receivedAt: 1_000, lastReceivedAt: 1_000, receivedCount: 1 }]);
      expect(calls).toBe(2);
      stop();
      await store.saveEvent(event('second'));
      expect(calls).toBe(2);
    });
  });

  describe('listing and searching events', () => {
    it('pages newest first by id, filters (email and wallet without case) and ends with a null cursor', async () => {
      const store = await open();
      const ids: number[] = [];
      for (let i = 0; i < 5; i += 1) ids.push((await store.saveEvent(event(`t-${i}`, { email: i % 2 === 0 ? 'even@example.com' : 'odd@example.com' }))).id);
      const first = await store.listEvents({}, { limit: 2 });
      expect(first.items.map((e) => e.id)).toEqual([ids[4], ids[3]]);
      expect(first.items[0]!.bodyBytes).toBe(event('t-4').body.length);
      const second = await store.listEvents({}, { limit: 2, after: first.next! });
      expect(second.items.map((e) => e.id)).toEqual([ids[2], ids[1]]);
      const last = await store.listEvents({}, { limit: 2, after: second.next! });
      expect(last).toEqual({ items: [expect.objectContaining({ id: ids[0] })], next: null });
      expect((await store.listEvents({ email: 'EVEN@example.com' }, { limit: 10 })).items.map((e) => e.id)).toEqual([ids[4], ids[2], ids[0]]);
      expect((await store.listEvents({ transferId: 't-3' }, { limit: 10 })).items.map((e) => e.id)).toEqual([ids[3]]);
    });

    it('searches a time range newest first by receipt time, paging through ties by id', async () => {
      const store = await open();
      const at = [3_000, 1_000, 2_000, 2_000, 2_000, 9_000];
      const ids: number[] = [];
      for (const [i, receivedAt] of at.entries()) ids.push((await store.saveEvent(event(`t-${i}`, { receivedAt }))).id);
      const seen: number[] = [];
      let after: { id: number; receivedAt: number } | undefined;
      do {
        const page = await store.listEvents({ receivedFrom: 1_500, receivedTo: 9_000 }, { limit: 2, ...(after && { after }) });
        seen.push(...page.items.map((e) => e.id));
        after = page.next ?? undefined;
      } while (after);
      expect(seen).toEqual([ids[0], ids[4], ids[3], ids[2]]);
    });

    it('searches by delivery state and by rare values, newest first', async () => {
      const store = await open();
      const dead = await store.saveEvent(event('dead-one', { deliveries: [forward('broken', { deadReason: 'transform failed' })] }));
      const pending = await store.saveEvent(event('pending-one', { deliveries: [forward('fwd')] }));
      const other = await store.saveEvent(event('refund-1', { event: 'transfer:refunded', validation: 'unrecognised', source: 'shop' }));
      expect((await store.listEvents({ deliveryState: 'dead' }, { limit: 10 })).items.map((e) => e.id)).toEqual([dead.id]);
      expect((await store.listEvents({ deliveryState: 'pending' }, { limit: 10 })).items.map((e) => e.id)).toEqual([pending.id]);
      expect((await store.listEvents({ event: 'transfer:refunded' }, { limit: 10 })).items.map((e) => e.id)).toEqual([other.id]);
      expect((await store.listEvents({ validation: 'unrecognised', source: 'shop' }, { limit: 10 })).items.map((e) => e.id)).toEqual([other.id]);
      expect((await store.listEvents({ source: 'checkout' }, { limit: 1 })).next).toEqual({ id: pending.id, receivedAt: expect.any(Number) });
    });
  });

  describe('the outbox', () => {
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
      const claimed = await store.claimDueDeliveries({ now, limit: 10, leaseMs: 60_000 });
      expect(claimed).toHaveLength(2);
      const byRule = new Map(claimed.map((d) => [d.ruleId, d]));
      expect(byRule.get('untouched')).toEqual({
        id: expect.any(Number), eventId, ruleId: 'untouched', ruleSetHash: 'h1', contentType: 'application/json', attempts: 0, leaseToken: claimed[0]!.leaseToken,
        payload: RAW,
      });
      expect(byRule.get('transformed')!.payload.toString()).toBe('{"email":"a@b.c"}');
      expect(claimed[1]!.leaseToken).toBe(claimed[0]!.leaseToken);
      expect(claimed[0]!.leaseToken).toMatch(/^[0-9a-f-]{36}$/);
    });

    it('leases what it returns: nothing again until the lease ends, then the same rows with their attempt count', async () => {
      const { store, now } = await storeWithTwoDeliveries();
      const first = await store.claimDueDeliveries({ now, limit: 1, leaseMs: 60_000 });
      expect(first).toHaveLength(1);
      await store.recordAttempt(first[0]!.id, first[0]!.leaseToken, attempt(1, 'pending', 500), { state: 'pending', nextAttemptAt: now + 1_000 });
      const second = await store.claimDueDeliveries({ now, limit: 10, leaseMs: 60_000 });
      expect(second).toHaveLength(1);
      expect(second[0]!.id).not.toBe(first[0]!.id);
      expect(await store.claimDueDeliveries({ now: now + 500, limit: 10, leaseMs: 60_000 })).toEqual([]);
      expect(await store.nextDueAt()).toBe(now + 1_000);
      const retried = await store.claimDueDeliveries({ now: now + 1_000, limit: 10, leaseMs: 60_000 });
      expect(retried.map((d) => [d.id, d.attempts])).toEqual([[first[0]!.id, 1]]);
      // The other row is still leased until its lease ends, then due again with no attempt recorded.
      const expired = await store.claimDueDeliveries({ now: now + 60_001, limit: 10, leaseMs: 60_000 });
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
      const claimed = await store.claimDueDeliveries({ now, limit: 2, leaseMs: 60_000 });
      expect(claimed.map(({ id, ruleId }) => ({ id, ruleId })).sort((a, b) => a.id - b.id)).toEqual(created.slice(0, 2));
    });

    it('records every attempt, but moves the delivery on only while the lease is the attempt\'s', async () => {
      const { store, now } = await storeWithTwoDeliveries();
      const [stale] = await store.claimDueDeliveries({ now, limit: 1, leaseMs: 1_000 });
      // The lease ran out: claimed again, under a new lease.
      const current = (await store.claimDueDeliveries({ now: now + 2_000, limit: 10, leaseMs: 60_000 })).find((d) => d.id === stale!.id);
      expect(current!.leaseToken).not.toBe(stale!.leaseToken);
      expect(await store.recordAttempt(stale!.id, stale!.leaseToken, attempt(1, 'delivered'), { state: 'delivered' })).toBe(false);
      expect((await store.getDelivery(stale!.id))!).toMatchObject({ state: 'pending', attempts: 0, attemptLog: [expect.objectContaining({ attempt: 1, outcome: 'delivered' })] });
      expect(await store.recordAttempt(current!.id, current!.leaseToken, attempt(1, 'dead', 410), { state: 'dead', reason: 'gone' })).toBe(true);
      const detail = (await store.getDelivery(current!.id))!;
      expect(detail).toMatchObject({ state: 'dead', attempts: 1, lastStatus: 410, deadReason: 'gone', nextAttemptAt: null });
      expect(detail.attemptLog.map((a) => a.status)).toEqual([200, 410]);
      expect(await store.getDelivery(current!.id + 1000)).toBeNull();
    });

    it('gives a claimed row back without an attempt, due again when asked', async () => {
      const { store, now } = await storeWithTwoDeliveries();
      const claimed = await store.claimDueDeliveries({ now, limit: 10, leaseMs: 60_000 });
      await store.releaseDelivery(claimed[0]!.id, claimed[0]!.leaseToken, now + 200);
      await store.releaseDelivery(claimed[1]!.id, 'not-the-lease', now + 200); // someone else's lease: no effect
      expect(await store.claimDueDeliveries({ now: now + 100, limit: 10, leaseMs: 60_000 })).toEqual([]);
      const again = await store.claimDueDeliveries({ now: now + 200, limit: 10, leaseMs: 60_000 });
      expect(again.map((d) => [d.id, d.attempts])).toEqual([[claimed[0]!.id, 0]]);
    });

    it('keeps dead-on-arrival deliveries out of claims, and counts the outbox', async () => {
      const store = await open();
      const now = Date.now();
      await store.saveEvent(event('t-1', { receivedAt: now, deliveries: [forward('ok'), forward('later', { delayMs: 5_000 }), forward('bad', { deadReason: 'transform failed' })] }));
      expect(await store.outboxStats(now + 1_000)).toEqual({ pending: 2, due: 1, dead: 1, oldestDueAgeMs: 1_000 });
      expect((await store.claimDueDeliveries({ now, limit: 10, leaseMs: 60_000 })).map((d) => d.ruleId)).toEqual(['ok']);
      expect(await store.nextDueAt()).toBe(now + 5_000);
      expect((await store.listDeliveries({ state: 'dead' }, { limit: 10 })).items).toEqual([
        expect.objectContaining({ ruleId: 'bad', state: 'dead', deadReason: 'transform failed', nextAttemptAt: null, origin: 'ingest' }),
      ]);
      const empty = await open();
      expect(await empty.nextDueAt()).toBeNull();
      expect(await empty.outboxStats(now)).toEqual({ pending: 0, due: 0, dead: 0, oldestDueAgeMs: 0 });
    });

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
      const retried = await store.retryDeadDeliveries({ ruleId: 'bad' }, 1, now);
      expect(retried).toHaveLength(1);
      expect(await store.retryDeadDeliveries({ ruleId: 'bad', afterId: retried[0]! }, 10, now)).toHaveLength(1);
      const [otherDead] = (await store.listDeliveries({ state: 'dead' }, { limit: 10 })).items;
      expect(await store.retryDelivery(otherDead!.id, now)).toBe(true);
      expect(await store.retryDelivery(otherDead!.id, now)).toBe(false); // already pending
      expect(await store.countDeadDeliveries({})).toBe(0);
      expect((await store.getDelivery(otherDead!.id))!).toMatchObject({ state: 'pending', deadReason: null, nextAttemptAt: now });
      expect(due).toBe(5);
    });

    it('counts deliveries per state of each rule, zeros for a rule without any', async () => {
      const store = await open();
      const now = Date.now();
      await store.saveEvent(event('t-1', { receivedAt: now, deliveries: [forward('a'), forward('a'), forward('a', { deadReason: 'x' }), forward('b')] }));
      const [claimed] = await store.claimDueDeliveries({ now, limit: 1, leaseMs: 60_000 });
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
      const [claimed] = await store.claimDueDeliveries({ now, limit: 1, leaseMs: 60_000 });
      await store.recordAttempt(claimed!.id, claimed!.leaseToken, attempt(1, 'delivered'), { state: 'delivered' });
      const counts = await store.deliveryCountsByEvent([first.id, second.id]);
      expect(counts.get(first.id)).toEqual({ pending: 0, delivered: 1, dead: 1 });
      expect(counts.get(second.id)).toEqual({ pending: 0, delivered: 0, dead: 0 });
      expect((await store.deliveryCountsByEvent([])).size).toBe(0);
    });
  });

  describe('retention, export and import', () => {
    it('prunes the oldest events first, never one with a pending delivery, an import by its import time', async () => {
      const store = await open();
      const old = await store.saveEvent(event('old', { receivedAt: 1_000 }));
      const oldPending = await store.saveEvent(event('old-pending', { receivedAt: 1_500, deliveries: [forward('fwd')] }));
      await store.importEvents([{ ...event('imported', { receivedAt: 1_200 }), lastReceivedAt: 1_200, receivedCount: 1 }], { importedAt: 50_000 });
      const recent = await store.saveEvent(event('recent', { receivedAt: 20_000 }));
      expect(await store.pruneEventsOlderThan(10_000, 100)).toBe(1);
      expect(await store.getEvent(old.id)).toBeNull();
      expect(await store.getEvent(oldPending.id)).not.toBeNull();
      expect(await store.pruneOldestEvents(1)).toBe(1); // by receipt time, whatever the import time
      expect(await store.countEvents({ transferId: 'imported' })).toBe(0);
      expect(await store.getEvent(recent.id)).not.toBeNull();
      expect(await store.countEvents({})).toBe(2);
      expect(await store.reclaimFreePages(10)).toBeGreaterThanOrEqual(0);
    });

    it('exports whole events oldest first and imports only those not already stored', async () => {
      const store = await open();
      for (const [i, receivedAt] of [1_000, 2_000, 3_000].entries()) await store.saveEvent(event(`t-${i}`, { receivedAt, headers: { n: String(i) } }));
      const exported = await store.listEventsForExport({}, 10);
      expect(exported.map((e) => [e.transferId, e.headers])).toEqual([['t-0', { n: '0' }], ['t-1', { n: '1' }], ['t-2', { n: '2' }]]);
      expect((await store.listEventsForExport({ afterId: exported[0]!.id }, 1)).map((e) => e.transferId)).toEqual(['t-1']);
      expect((await store.listEventBodies({ receivedFrom: 2_000 }, 10)).map((e) => e.body.toString())).toEqual([exported[1]!.body.toString(), exported[2]!.body.toString()]);
      expect(await store.firstEventIdReceivedFrom(1_500)).toBe(exported[1]!.id);
      expect(await store.firstEventIdReceivedFrom(9_000)).toBeNull();
      const target = await open();
      const imported = exported.map(({ id: _id, importedAt: _importedAt, ...e }) => e);
      expect(await target.importEvents(imported.slice(0, 2), { importedAt: null })).toEqual({ imported: 2, duplicates: 0 });
      expect(await target.importEvents(imported, { importedAt: null })).toEqual({ imported: 1, duplicates: 2 });
      const copies = await target.listEventsForExport({}, 10);
      expect(copies.map((e) => Buffer.compare(e.body, exported.find((x) => x.transferId === e.transferId)!.body))).toEqual([0, 0, 0]);
      expect(copies.every((e) => e.importedAt === null)).toBe(true);
      expect(await target.countEvents({ receivedTo: 2_500 })).toBe(2);
    });
  });

  describe('new events in commit order (event streams)', () => {
    /**
     * Reads everything after `from`, `limit` at a time, as a stream does; while events are held back (on
     * PostgreSQL, behind any write transaction of the server still open, other databases' too) it reads again.
     */
    async function readAll(store: Store, from: StreamPosition, filter: EventSearch = {}, limit = 2): Promise<{ ids: number[]; position: StreamPosition }> {
      const ids: number[] = [];
      let position = from;
      const deadline = Date.now() + 20_000;
      for (;;) {
        const read = await store.readNewEvents(filter, position, limit);
        ids.push(...read.events.map((e) => e.id));
        position = read.position;
        if (read.events.length < limit && (!read.heldBack || Date.now() > deadline)) return { ids, position };
        if (read.events.length < limit) await new Promise((resolve) => setTimeout(resolve, 10));
      }
    }

    it('reads each new event once across reads, imports and edited copies too, repeats not, filters applied', async () => {
      const store = await open();
      const before = await store.saveEvent(event('before'));
      // "Now" misses nothing committed later; on PostgreSQL it may also take in events committed just before
      // (behind a transaction of the server still open), so the exact checks start after `before`.
      const now = await store.streamPosition({ now: true });
      const start = await store.streamPosition({ afterEventId: before.id });
      const a = await store.saveEvent(event('a'));
      await store.saveEvent(event('a')); // a repeat: counted, not new
      const b = await store.saveEvent(event('b', { event: 'order:archived', validation: 'unrecognised' }));
      await store.importEvents([{ ...event('imported'), lastReceivedAt: 1, receivedCount: 1 }]);
      const imported = (await store.listEventsForExport({ transferId: 'imported' }, 1))[0]!;
      const copy = await store.saveEditedCopy({ ...event('a'), editedFrom: a.id, editedAt: Date.now(), via: 'api' });
      const first = await readAll(store, start);
      expect(first.ids).toEqual([a.id, b.id, imported.id, copy]);
      expect((await readAll(store, now)).ids.filter((id) => id !== before.id)).toEqual(first.ids);
      // Nothing twice: the position after a read is past everything read.
      expect((await store.readNewEvents({}, first.position, 10)).events).toEqual([]);
      const c = await store.saveEvent(event('c'));
      expect((await readAll(store, first.position)).ids).toEqual([c.id]);
      // A filter passes over what it leaves out, and the next read starts past it.
      const filtered = await readAll(store, start, { event: 'order:archived' });
      expect(filtered.ids).toEqual([b.id]);
      const d = await store.saveEvent(event('d', { event: 'order:archived', validation: 'unrecognised' }));
      expect((await readAll(store, filtered.position, { event: 'order:archived' })).ids).toEqual([d.id]);
    });

    it('starts after an event, or with the events received since a time', async () => {
      const store = await open();
      const old = await store.saveEvent(event('old', { receivedAt: 1_000 }));
      const x = await store.saveEvent(event('x', { receivedAt: 5_000 }));
      const y = await store.saveEvent(event('y', { receivedAt: 6_000 }));
      expect((await readAll(store, await store.streamPosition({ afterEventId: old.id }))).ids).toEqual([x.id, y.id]);
      expect((await readAll(store, await store.streamPosition({ afterEventId: x.id }))).ids).toEqual([y.id]);
      expect((await readAll(store, await store.streamPosition({ receivedFrom: 4_000 }))).ids).toEqual([x.id, y.id]);
      expect((await readAll(store, await store.streamPosition({ receivedFrom: 9_000 }))).ids).toEqual([]);
      // A pruned event: the reader starts just before the next one still stored.
      await store.pruneOldestEvents(1);
      expect((await readAll(store, await store.streamPosition({ afterEventId: old.id }))).ids).toEqual([x.id, y.id]);
    });
  });

  describe('rule sets kept by hash', () => {
    it('keeps a rule set once: saving the same hash again keeps the first one', async () => {
      const store = await open();
      expect(await store.getRuleSet('abc')).toBeNull();
      const rules = [{ id: 'r', file: 'rules/r.yaml', line: 1, definition: { id: 'r', to: { url: '${HOOK_URL}' } } }];
      await store.saveRuleSet({ hash: 'abc', kind: 'loaded', rules, firstLoadedAt: 1_000 });
      await Promise.all([store.saveRuleSet({ hash: 'abc', kind: 'one-off', rules: [], firstLoadedAt: 2_000 }), store.saveRuleSet({ hash: 'abc', kind: 'loaded', rules: [], firstLoadedAt: 3_000 })]);
      expect(await store.getRuleSet('abc')).toEqual({ hash: 'abc', kind: 'loaded', rules, firstLoadedAt: 1_000 });
      await store.saveRuleSet({ hash: 'one', kind: 'one-off', rules: [], firstLoadedAt: 4_000 });
      expect(await store.getRuleSet('one')).toEqual({ hash: 'one', kind: 'one-off', rules: [], firstLoadedAt: 4_000 });
    });

    it('records the rule set that routed an event, in the event, its bodies and its claimed deliveries', async () => {
      const store = await open();
      const routed = await store.saveEvent(event('t-routed', { ruleSetHash: 'set-a', deliveries: [forward('fwd', { ruleSetHash: 'set-a' })] }));
      const before = await store.saveEvent(event('t-before'));
      expect(await store.getEvent(routed.id)).toMatchObject({ ruleSetHash: 'set-a', edit: null });
      expect(await store.getEvent(before.id)).toMatchObject({ ruleSetHash: null, edit: null });
      expect((await store.listEventBodies({}, 10)).map((e) => [e.id, e.ruleSetHash])).toEqual([[routed.id, 'set-a'], [before.id, null]]);
      const claimed = await store.claimDueDeliveries({ now: Date.now() + 1_000, limit: 10, leaseMs: 60_000 });
      expect(claimed.map((d) => [d.eventId, d.ruleSetHash])).toEqual([[routed.id, 'set-a']]);
    });
  });

  describe('edited copies', () => {
    const EDITED = Buffer.from('{"event":"transfer:succeeded","result":{"id":"tr-1","x":1}}');

    it('stores copies of one transfer beside the original, numbered; a real repeat of the original stays a duplicate', async () => {
      const store = await open();
      const original = await store.saveEvent(event('tr-1', { receivedAt: 1_000, ruleSetHash: 'set-a', deliveries: [forward('fwd')] }));
      const { receivedAt: _receivedAt, ...copy } = event('tr-1', { body: EDITED, ruleSetHash: 'set-b' });
      const first = await store.saveEditedCopy({ ...copy, editedFrom: original.id, editedAt: 5_000, via: 'cli' });
      const second = await store.saveEditedCopy({ ...copy, editedFrom: original.id, editedAt: 6_000, via: 'console', validation: 'invalid' });
      expect(new Set([original.id, first, second]).size).toBe(3);

      expect(await store.saveEvent(event('tr-1', { receivedAt: 9_000, deliveries: [forward('fwd')] }))).toEqual({ id: original.id, duplicate: true, receivedCount: 2 });
      expect(await store.getEvent(original.id)).toMatchObject({ edit: null, ruleSetHash: 'set-a', receivedCount: 2, lastReceivedAt: 9_000 });
      const stored = (await store.getEvent(first))!;
      expect(stored).toMatchObject({
        transferId: 'tr-1', receivedAt: 5_000, lastReceivedAt: 5_000, receivedCount: 1, ruleSetHash: 'set-b', importedAt: null,
        edit: { editedFrom: original.id, editedAt: 5_000, via: 'cli', number: 1 },
      });
      expect(stored.body.equals(EDITED)).toBe(true);
      expect(await store.getEvent(second)).toMatchObject({ validation: 'invalid', edit: { editedFrom: original.id, via: 'console', number: 2 } });

      // Listed as such, and found by the transfer id they carry and by validation `invalid`.
      const page = await store.listEvents({ transferId: 'tr-1' }, { limit: 10 });
      expect(page.items.map((e) => [e.id, e.edit?.number ?? 0])).toEqual([[second, 2], [first, 1], [original.id, 0]]);
      expect((await store.listEvents({ validation: 'invalid' }, { limit: 10 })).items.map((e) => e.id)).toEqual([second]);
      expect(await store.countEvents({ validation: 'invalid' })).toBe(1);
    });

    it('numbers copies made at the same moment one apart', async () => {
      const store = await open();
      const original = await store.saveEvent(event('tr-2'));
      const { receivedAt: _receivedAt, ...copy } = event('tr-2', { body: EDITED });
      const ids = await Promise.all([1, 2, 3, 4].map((n) => store.saveEditedCopy({ ...copy, editedFrom: original.id, editedAt: n * 1_000, via: 'api' })));
      const numbers = await Promise.all(ids.map(async (id) => (await store.getEvent(id))!.edit!.number));
      expect(numbers.sort()).toEqual([1, 2, 3, 4]);
    });

    it('stores a copy\'s deliveries (origin replay) with it, due at once, and tells who listens', async () => {
      const store = await open();
      const original = await store.saveEvent(event('tr-3'));
      let calls = 0;
      const stop = store.onDeliveriesDue(() => {
        calls += 1;
      });
      const now = Date.now();
      const { receivedAt: _receivedAt, ...copy } = event('tr-3', { body: EDITED, ruleSetHash: 'one-off', deliveries: [forward('to', { ruleSetHash: 'one-off' })] });
      const id = await store.saveEditedCopy({ ...copy, editedFrom: original.id, editedAt: now, via: 'api' });
      stop();
      expect(calls).toBe(1);
      const { items } = await store.listDeliveries({ eventId: id }, { limit: 10 });
      expect(items).toMatchObject([{ ruleId: 'to', ruleSetHash: 'one-off', origin: 'replay', state: 'pending' }]);
      const claimed = await store.claimDueDeliveries({ now: now + 1, limit: 10, leaseMs: 60_000 });
      expect(claimed.map((d) => [d.eventId, d.ruleSetHash, d.payload.equals(EDITED)])).toEqual([[id, 'one-off', true]]);
    });

    it('exports a copy with its edit and rule set; an import keeps them and never takes it for its original', async () => {
      const store = await open();
      const original = await store.saveEvent(event('tr-4', { ruleSetHash: 'set-a' }));
      const { receivedAt: _receivedAt, ...copy } = event('tr-4', { body: EDITED, ruleSetHash: 'set-b' });
      await store.saveEditedCopy({ ...copy, editedFrom: original.id, editedAt: 5_000, via: 'console' });
      const exported = await store.listEventsForExport({}, 10);
      const target = await open();
      const imported = exported.map(({ id: _id, importedAt: _importedAt, ...e }) => e);
      expect(await target.importEvents(imported)).toEqual({ imported: 2, duplicates: 0 });
      expect(await target.importEvents(imported)).toEqual({ imported: 0, duplicates: 2 });
      const copies = await target.listEventsForExport({}, 10);
      expect(copies.map((e) => [e.ruleSetHash, e.edit && { ...e.edit, editedFrom: 0 }])).toEqual([
        ['set-a', null],
        ['set-b', { editedFrom: 0, editedAt: 5_000, via: 'console', number: 1 }],
      ]);
    });
  });

  describe('jobs', () => {
    it('keeps a job\'s progress, lists newest first, and never overwrites a cancel with done', async () => {
      const store = await open();
      const job = await store.createJob({ kind: 'replay', filter: { event: 'transfer:succeeded' }, ruleId: null, total: 10, startedAt: 1_000 });
      expect(job).toMatchObject({ state: 'running', processed: 0, created: 0, failed: 0, total: 10, filter: { event: 'transfer:succeeded' }, finishedAt: null });
      expect(job.summary).toBeNull();
      const summary = { route: 'original', perRule: { fwd: 3 }, unknownRouting: 1 };
      await store.updateJobProgress(job.id, { total: 10, processed: 3, created: 2, failed: 1, summary });
      // A report without a summary keeps the last one given.
      await store.updateJobProgress(job.id, { total: 10, processed: 4, created: 3, failed: 1 });
      expect(await store.getJob(job.id)).toMatchObject({ processed: 4, created: 3, failed: 1, summary });
      expect(await store.finishJob(job.id, 'cancelled', null, 2_000)).toBe(true);
      expect(await store.finishJob(job.id, 'done', null, 3_000)).toBe(false);
      expect(await store.getJob(job.id)).toMatchObject({ state: 'cancelled', finishedAt: 2_000 });
      const second = await store.createJob({ kind: 'retry', filter: {}, ruleId: 'r', total: 1, startedAt: 4_000 });
      expect((await store.listJobs(10)).map((j) => j.id)).toEqual([second.id, job.id]);
      expect(await store.failRunningJobs('restarted', 5_000)).toBe(1);
      expect(await store.getJob(second.id)).toMatchObject({ state: 'failed', error: 'restarted' });
      expect(await store.getJob(second.id + 100)).toBeNull();
    });
  });

  describe('health', () => {
    it('says it can write while open, and answers store_unavailable once closed', async () => {
      const store = await factory.open();
      await expect(store.checkWritable()).resolves.toBeUndefined();
      await store.close();
      const refused = await store.saveEvent(event('late')).catch((err: unknown) => err);
      expect(refused).toBeInstanceOf(HookrelayError);
      expect(refused).toMatchObject({ code: 'store_unavailable', status: 503 });
      await expect(store.checkWritable()).rejects.toMatchObject({ code: 'store_unavailable' });
    });
  });
}
