import { afterEach, describe, expect, it } from 'vitest';
import { HookrelayError } from '../../src/errors.js';
import type { NewNode } from '../../src/store/cluster-store.js';
import type { AttemptRecord } from '../../src/store/delivery-queue.js';
import { MAX_RECEIVED_COUNT, type EventSearch, type NewEvent } from '../../src/store/event-store.js';
import type { StreamPosition } from '../../src/store/new-event-store.js';
import type { NewDelivery } from '../../src/store/outbox-store.js';
import type { Store } from '../../src/store/store.js';

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

function node(id: string, overrides: Partial<NewNode> = {}): NewNode {
  return { id, host: 'host-1', pid: 4242, role: 'all', version: '1.2.3', ruleSetHash: 'hash-1', heartbeatMs: 60_000, startedAt: 1_000, ...overrides };
}

/** Polls until the node is no longer listed as live (its heartbeat aged past three of its intervals). */
async function waitUntilNotLive(store: Store, id: string): Promise<void> {
  const deadline = Date.now() + 5_000;
  while ((await store.listLiveNodes()).some((n) => n.id === id)) {
    if (Date.now() > deadline) throw new Error(`node ${id} still live after 5 s`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Opens stores from `factory` for the tests of the calling suite; each is closed after its test. */
export function storeOpener(factory: StoreFactory): () => Promise<Store> {
  const opened: Store[] = [];
  afterEach(async () => {
    for (const store of opened.splice(0)) await store.close();
  });
  return async () => {
    const store = await factory.open();
    opened.push(store);
    return store;
  };
}

export function storeContract(factory: StoreFactory): void {
  const open = storeOpener(factory);

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

    it('keeps the amount through ingest, import and edited copies, and lists and streams it (null when none)', async () => {
      const store = await open();
      const start = await store.streamPosition({ now: true });
      const paid = await store.saveEvent(event('paid', { totalPriceUsd: 104.37 }));
      const free = await store.saveEvent(event('free', { totalPriceUsd: 0 }));
      const none = await store.saveEvent(event('none'));
      await store.importEvents([{ ...event('imported', { totalPriceUsd: 12.5 }), lastReceivedAt: 1, receivedCount: 1 }]);
      const copy = await store.saveEditedCopy({ ...event('paid', { totalPriceUsd: 99 }), editedFrom: paid.id, editedAt: Date.now(), via: 'api' });
      const listed = (await store.listEvents({}, { limit: 10 })).items;
      expect(Object.fromEntries(listed.map((e) => [e.id, e.totalPriceUsd]))).toEqual({
        [paid.id]: 104.37, [free.id]: 0, [none.id]: null, [listed.find((e) => e.transferId === 'imported')!.id]: 12.5, [copy]: 99,
      });
      expect((await store.getEvent(paid.id))!.totalPriceUsd).toBe(104.37);
      const streamed = await store.readNewEvents({}, start, 10, false);
      expect(streamed.events.map((e) => e.totalPriceUsd)).toEqual([104.37, 0, null, 12.5, 99]);
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

  describe('key semantics: two different strings are two keys, the same string one', () => {
    // A lone surrogate is valid in JSON ("\ud800") and a NUL too ("\u0000"); U+0001 starts an escaped value on
    // PostgreSQL, so a raw value that looks like one must stay its own key.
    const KEYS = ['T-\ud800', 'T-\ufffd', 'T-\udc00', 'T-\ud800\udc00', 'T-\u0000', 'T-', '\u0001"T-\\ud800"', '\u0001T', '\u0001'];

    it('stores each of strings that one encoding could merge as its own event; a repeat is a duplicate', async () => {
      const store = await open();
      const first = [];
      for (const key of KEYS) first.push(await store.saveEvent(event(key, { event: `x:${key}`, email: key, checkoutId: key, walletAddress: key })));
      expect(first.map((s) => s.duplicate)).toEqual(KEYS.map(() => false));
      expect(new Set(first.map((s) => s.id)).size).toBe(KEYS.length);
      const again = await Promise.all(KEYS.map((key) => store.saveEvent(event(key, { event: `x:${key}` }))));
      expect(again).toEqual(first.map((s) => ({ id: s.id, duplicate: true, receivedCount: 2 })));
      for (const [i, key] of KEYS.entries()) {
        const stored = (await store.getEvent(first[i]!.id))!;
        expect(stored).toMatchObject({ transferId: key, event: `x:${key}` });
        // The lookup columns keep NUL and the escape character too (a lone surrogate there is only in the body).
        if (!/[\ud800-\udfff]/u.test(key)) expect(stored).toMatchObject({ email: key, checkoutId: key, walletAddress: key });
        const found = await store.listEvents({ transferId: key }, { limit: 10 });
        expect(found.items.map((e) => [e.id, e.transferId]), JSON.stringify(key)).toEqual([[first[i]!.id, key]]);
        expect((await store.listEvents({ event: `x:${key}` }, { limit: 10 })).items.map((e) => e.id)).toEqual([first[i]!.id]);
        // The search columns are not keys: one driver stores a lone surrogate there as U+FFFD (docs/operations.md), so a
        // search for a value with U+FFFD may also find those events; any other search finds exactly its own.
        const byEmail = (await store.listEvents({ email: key }, { limit: 10 })).items.map((e) => e.id);
        if (key.includes('\ufffd')) expect(byEmail).toContain(first[i]!.id);
        else if (!/[\ud800-\udfff]/u.test(key)) expect(byEmail).toEqual([first[i]!.id]);
        expect(await store.countEvents({ transferId: key, event: `x:${key}` })).toBe(1);
      }
      const exported = await store.listEventsForExport({}, 100);
      expect(exported.map((e) => [e.transferId, e.event])).toEqual(KEYS.map((key) => [key, `x:${key}`]));
      expect((await store.listEventBodies({}, 100)).map((e) => e.event)).toEqual(KEYS.map((key) => `x:${key}`));
      // On PostgreSQL a write transaction open anywhere on the server holds new events back for a moment.
      let read = await store.readNewEvents({}, { tx: null, id: 0 }, 100, false);
      for (const deadline = Date.now() + 20_000; read.events.length < KEYS.length && read.heldBack && Date.now() < deadline; ) {
        await new Promise((resolve) => setTimeout(resolve, 10));
        read = await store.readNewEvents({}, { tx: null, id: 0 }, 100, false);
      }
      expect(read.events.map((e) => e.transferId)).toEqual(KEYS);
      // Another store takes them through import as the same keys: none is new there twice.
      const target = await open();
      const imported = exported.map(({ id: _id, importedAt: _importedAt, ...e }) => e);
      expect(await target.importEvents(imported)).toEqual({ imported: KEYS.length, duplicates: 0 });
      expect(await target.importEvents(imported)).toEqual({ imported: 0, duplicates: KEYS.length });
      for (const key of KEYS) expect(await target.saveEvent(event(key, { event: `x:${key}` }))).toMatchObject({ duplicate: true });
    });

    it('keeps an edited copy under its original\'s key', async () => {
      const store = await open();
      const original = await store.saveEvent(event('T-\ud800'));
      const other = await store.saveEvent(event('T-\ufffd'));
      const copyId = await store.saveEditedCopy({
        source: 'checkout', event: 'transfer:succeeded', transferId: 'T-\ud800', checkoutId: null, email: null, walletAddress: null, validation: 'valid',
        headers: {}, body: Buffer.from('{}'), editedFrom: original.id, editedAt: 5_000, via: 'api', deliveries: [],
      });
      expect(await store.getEvent(copyId)).toMatchObject({ transferId: 'T-\ud800', edit: { number: 1 } });
      expect((await store.listEvents({ transferId: 'T-\ud800' }, { limit: 10 })).items.map((e) => e.id)).toEqual([copyId, original.id]);
      expect((await store.listEvents({ transferId: 'T-\ufffd' }, { limit: 10 })).items.map((e) => e.id)).toEqual([other.id]);
    });

    it('counts a repeat up to the largest integer and stays there, still answered as a duplicate', async () => {
      const store = await open();
      const { receivedAt: _at, deliveries: _none, ...imported } = event('many');
      await store.importEvents([{ ...imported, receivedAt: 1_000, lastReceivedAt: 1_000, receivedCount: MAX_RECEIVED_COUNT - 1 }]);
      const repeats = [];
      for (let i = 0; i < 3; i += 1) repeats.push(await store.saveEvent(event('many')));
      expect(repeats.map((r) => [r.duplicate, r.receivedCount])).toEqual([[true, MAX_RECEIVED_COUNT], [true, MAX_RECEIVED_COUNT], [true, MAX_RECEIVED_COUNT]]);
      const both = await Promise.all([store.saveEvent(event('many')), store.saveEvent(event('many'))]);
      expect(both.every((r) => r.duplicate && r.receivedCount <= MAX_RECEIVED_COUNT)).toBe(true);
      expect((await store.listEventsForExport({ transferId: 'many' }, 1))[0]!.receivedCount).toBe(MAX_RECEIVED_COUNT);
    });

    it('answers a committed event even when a listener told of the commit throws', async () => {
      const store = await open();
      store.onEventsStored(() => {
        throw new Error('a listener failed');
      });
      store.onDeliveriesDue(() => {
        throw new Error('a listener failed');
      });
      expect(await store.saveEvent(event('heard', { deliveries: [forward('fwd')] }))).toMatchObject({ duplicate: false });
      expect(await store.countEvents({})).toBe(1);
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
        id: expect.any(Number), eventId, ruleId: 'untouched', ruleSetHash: 'h1', contentType: 'application/json', attempts: 0, passOffset: 0, leaseToken: claimed[0]!.leaseToken,
        orderKey: null, blockedSince: null, payload: RAW, hasBody: false,
      });
      expect(byRule.get('transformed')!.payload.toString()).toBe('{"email":"a@b.c"}');
      expect(byRule.get('transformed')!.hasBody).toBe(true);
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

    it('keeps a rendered body under the lease only; later claims send it', async () => {
      const { store, now } = await storeWithTwoDeliveries();
      const claimed = await store.claimDueDeliveries({ now, limit: 10, leaseMs: 1_000 });
      const untouched = claimed.find((d) => d.ruleId === 'untouched')!;
      const rendered = { body: Buffer.from('{"rendered":true}'), contentType: 'application/vnd.example+json' };
      expect(await store.saveRenderedBody(untouched.id, 'not-the-lease', rendered)).toBe(false);
      expect(await store.saveRenderedBody(untouched.id, untouched.leaseToken, rendered)).toBe(true);
      const again = (await store.claimDueDeliveries({ now: now + 2_000, limit: 10, leaseMs: 60_000 })).find((d) => d.id === untouched.id)!;
      expect(again).toMatchObject({ payload: rendered.body, contentType: rendered.contentType, hasBody: true });
      expect(await store.saveRenderedBody(untouched.id, untouched.leaseToken, { body: Buffer.from('{}'), contentType: 'application/json' })).toBe(false);
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

    it('takes due times with a fraction of a millisecond (a jittered retry time) when giving a row back or recording an attempt', async () => {
      const { store, now } = await storeWithTwoDeliveries();
      const claimed = await store.claimDueDeliveries({ now, limit: 10, leaseMs: 60_000 });
      await store.releaseDelivery(claimed[0]!.id, claimed[0]!.leaseToken, now + 200.37);
      expect(await store.recordAttempt(claimed[1]!.id, claimed[1]!.leaseToken, attempt(1, 'pending', 503), { state: 'pending', nextAttemptAt: now + 300.61 })).toBe(true);
      const again = await store.claimDueDeliveries({ now: now + 301, limit: 10, leaseMs: 60_000 });
      expect(again.map((d) => [d.id, d.attempts])).toEqual([[claimed[0]!.id, 0], [claimed[1]!.id, 1]]);
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

  describe('ordered delivery per key', () => {
    /** Saves one event per key in order, each with one delivery of `rule` keyed so; returns the delivery ids. */
    async function saveKeyed(store: Store, now: number, keys: (string | undefined)[], rule = 'ordered'): Promise<number[]> {
      const ids: number[] = [];
      for (const [i, key] of keys.entries()) {
        const { id: eventId } = await store.saveEvent(event(`k-${rule}-${i}-${now}`, { receivedAt: now, deliveries: [forward(rule, key === undefined ? {} : { orderKey: key })] }));
        ids.push((await store.listDeliveries({ eventId }, { limit: 1 })).items[0]!.id);
      }
      return ids;
    }
    const claimIds = async (store: Store, now: number, leaseMs = 60_000): Promise<number[]> =>
      (await store.claimDueDeliveries({ now, limit: 100, leaseMs })).map((d) => d.id).sort((a, b) => a - b);

    it('claims only the head of each key: the next row of a key after the previous one is settled', async () => {
      const store = await open();
      const now = Date.now();
      const [a1, b1, a2, none1, a3, b2, none2] = await saveKeyed(store, now, ['A', 'B', 'A', undefined, 'A', 'B', undefined]);
      expect((await store.getDelivery(a1!))!.orderKey).toBe('A');
      expect((await store.getDelivery(none1!))!.orderKey).toBeNull();
      const first = await store.claimDueDeliveries({ now, limit: 100, leaseMs: 60_000 });
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
      const first = await store.claimDueDeliveries({ now, limit: 100, leaseMs: 60_000 });
      expect(first.map((d) => d.id).sort((x, y) => x - y)).toEqual([a1, b1, other1]);
      const head = first.find((d) => d.id === a1)!;
      await store.recordAttempt(a1!, head.leaseToken, attempt(1, 'pending', 503), { state: 'pending', nextAttemptAt: now + 5_000 });
      for (const d of first.filter((x) => x.id !== a1)) await store.recordAttempt(d.id, d.leaseToken, attempt(1, 'delivered'), { state: 'delivered' });
      expect(await claimIds(store, now + 100)).toEqual([other2]);
      // a2 is due but waits behind a1: the next due time is a1's retry, not a2's.
      expect(await store.nextDueAt()).toBe(now + 5_000);
      const retry = await store.claimDueDeliveries({ now: now + 5_000, limit: 100, leaseMs: 60_000 });
      expect(retry.map((d) => [d.id, d.attempts, d.blockedSince])).toEqual([[a1, 1, expect.any(Number)]]);
      await store.recordAttempt(a1!, retry[0]!.leaseToken, attempt(2, 'delivered'), { state: 'delivered' });
      expect(await claimIds(store, now + 5_001)).toEqual([a2]);
    });

    it('lists blocked keys with their head and how many wait behind it, and counts them per rule', async () => {
      const store = await open();
      const now = Date.now();
      const [a1] = await saveKeyed(store, now, ['A', 'A', 'A', 'B']);
      const claimed = await store.claimDueDeliveries({ now, limit: 100, leaseMs: 60_000 });
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
      const [again] = await store.claimDueDeliveries({ now: now + 9_000, limit: 100, leaseMs: 60_000 });
      expect(again!.blockedSince).toBe(failedAt);
      await store.recordAttempt(again!.id, again!.leaseToken, attempt(2, 'dead', 400), { state: 'dead', reason: 'bad request' });
      expect(await store.blockedKeyCounts()).toEqual(new Map());
    });

    it('puts a retried or bulk-retried delivery, and a replay, at the back of its key', async () => {
      const store = await open();
      const now = Date.now();
      const [a1, a2] = await saveKeyed(store, now, ['A', 'A']);
      const [head] = await store.claimDueDeliveries({ now, limit: 100, leaseMs: 60_000 });
      await store.recordAttempt(a1!, head!.leaseToken, attempt(1, 'dead', 410), { state: 'dead', reason: 'gone' });
      // a1 retried while a2 is pending: a1 now waits behind a2.
      expect(await store.retryDelivery(a1!, now)).toBe(true);
      expect((await store.getDelivery(a1!))!).toMatchObject({ state: 'pending' });
      const next = await store.claimDueDeliveries({ now: now + 1, limit: 100, leaseMs: 60_000 });
      expect(next.map((d) => d.id)).toEqual([a2]);
      // A replay of a2's event joins behind a1.
      const replayed = await store.createDeliveries((await store.getDelivery(a2!))!.eventId, [forward('ordered', { orderKey: 'A' })], 'replay');
      await store.recordAttempt(a2!, next[0]!.leaseToken, attempt(1, 'dead', 410), { state: 'dead', reason: 'gone' });
      expect(await claimIds(store, now + 2)).toEqual([a1]);
      const [retriedHead] = await store.claimDueDeliveries({ now: now + 60_003, limit: 100, leaseMs: 60_000 });
      expect(retriedHead!.id).toBe(a1);
      await store.recordAttempt(a1!, retriedHead!.leaseToken, attempt(2, 'delivered'), { state: 'delivered' });
      // Bulk retry of a2 (dead) while the replay is pending: a2 goes behind the replay.
      expect(await store.retryDeadDeliveries({ ruleId: 'ordered' }, 10, now)).toEqual([a2]);
      expect(await claimIds(store, now + 60_004)).toEqual(replayed);
    });

    it('renews a live lease and refuses a lost one', async () => {
      const store = await open();
      const now = Date.now();
      await saveKeyed(store, now, ['A', 'A']);
      const [head] = await store.claimDueDeliveries({ now, limit: 100, leaseMs: 1_000 });
      expect(await store.renewLease(head!.id, head!.leaseToken, { now: Date.now(), leaseMs: 120_000 })).toBe(true);
      // The renewed lease outlives the first one: nobody claims the head or its follower at its old end.
      expect(await claimIds(store, Date.now() + 5_000)).toEqual([]);
      expect(await store.renewLease(head!.id, 'not-the-lease', { now: Date.now(), leaseMs: 120_000 })).toBe(false);
      await store.recordAttempt(head!.id, head!.leaseToken, attempt(1, 'delivered'), { state: 'delivered' });
      expect(await store.renewLease(head!.id, head!.leaseToken, { now: Date.now(), leaseMs: 120_000 })).toBe(false);
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
        const read = await store.readNewEvents(filter, position, limit, false);
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
      expect((await store.readNewEvents({}, first.position, 10, false)).events).toEqual([]);
      const c = await store.saveEvent(event('c'));
      expect((await readAll(store, first.position)).ids).toEqual([c.id]);
      // A filter passes over what it leaves out, and the next read starts past it.
      const filtered = await readAll(store, start, { event: 'order:archived' });
      expect(filtered.ids).toEqual([b.id]);
      const d = await store.saveEvent(event('d', { event: 'order:archived', validation: 'unrecognised' }));
      expect((await readAll(store, filtered.position, { event: 'order:archived' })).ids).toEqual([d.id]);
    });

    it('reads headers and exact bytes only when asked for, the same summary either way', async () => {
      const store = await open();
      const body = Buffer.from('{"event":"transfer:succeeded","result":{"id":"bytes"}}  \n');
      const saved = await store.saveEvent(event('bytes', { body, headers: { 'x-service-signature': 'abc' } }));
      await store.importEvents([{ ...event('imported-later'), lastReceivedAt: 1, receivedCount: 1 }], { importedAt: 9_000 });
      const start = await store.streamPosition({ afterEventId: saved.id - 1 });
      const bare = (await store.readNewEvents({}, start, 10, false)).events;
      const whole = (await store.readNewEvents({}, start, 10, true)).events;
      expect(bare.map((e) => Object.keys(e).filter((k) => k === 'body' || k === 'headers'))).toEqual([[], []]);
      expect(bare[0]).toMatchObject({ id: saved.id, transferId: 'bytes', bodyBytes: body.length, importedAt: null });
      expect(bare[1]).toMatchObject({ transferId: 'imported-later', importedAt: 9_000 });
      expect(whole[0]!.body.equals(body)).toBe(true);
      expect(whole[0]!.headers).toEqual({ 'x-service-signature': 'abc' });
      expect(whole.map(({ body: _b, headers: _h, ...summary }) => summary)).toEqual(bare);
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

  describe('outages and redrive', () => {
    const DEST = 'http://127.0.0.1:9';

    /** One delivery of `ruleId`, attempted once and dead-lettered as `how` says; returns its id. */
    async function deadLetter(store: Store, ruleId: string, how: { retryable: boolean; status?: number; origin?: string }): Promise<number> {
      const { id: eventId } = await store.saveEvent(event(`t-${ruleId}-${Math.random()}`, { deliveries: [forward(ruleId)] }));
      const [delivery] = (await store.listDeliveries({ eventId }, { limit: 1 })).items;
      const claimed = (await store.claimDueDeliveries({ now: Date.now() + 60_000, limit: 100, leaseMs: 60_000 })).find((d) => d.id === delivery!.id)!;
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
      await new Promise((resolve) => setTimeout(resolve, 5));
      const { outage } = await store.openOutage(DEST, Date.now());
      const first = await deadLetter(store, 'a', { retryable: true });
      const gone = await deadLetter(store, 'a', { retryable: false, status: 404 });
      const elsewhere = await deadLetter(store, 'a', { retryable: true, origin: 'http://127.0.0.1:10' });
      const notOptedIn = await deadLetter(store, 'b', { retryable: true });
      const second = await deadLetter(store, 'a', { retryable: true });
      const closedAt = Date.now();
      const [one, other] = await Promise.all([store.closeOutage(DEST, closedAt, new Map([['a', 100]])), store.closeOutage(DEST, closedAt, new Map([['a', 100]]))]);
      const closed = (one ?? other)!;
      expect([one, other].filter((c) => c === null)).toHaveLength(1); // exactly one caller redrives
      expect(closed.redriven).toEqual([first, second]);
      expect(closed.outage).toMatchObject({ id: outage.id, closedAt, redriven: 2 });
      for (const id of [before, gone, elsewhere, notOptedIn]) expect((await store.getDelivery(id))!.state).toBe('dead');
      expect(await store.getDelivery(first)).toMatchObject({ state: 'pending', deadReason: null, redrives: [{ outageId: outage.id, kind: 'redrive', redrivenAt: closedAt, dueAt: closedAt }] });
      expect((await store.getDelivery(second))!.redrives).toEqual([{ outageId: outage.id, kind: 'redrive', redrivenAt: closedAt, dueAt: closedAt + 100 }]);
      // Same delivery, a new pass of its schedule: the claim says how many attempts came before it.
      const claimed = await store.claimDueDeliveries({ now: closedAt, limit: 10, leaseMs: 60_000 });
      expect(claimed.map((d) => [d.id, d.attempts, d.passOffset])).toEqual([[first, 1, 1]]);
      expect((await store.claimDueDeliveries({ now: closedAt + 100, limit: 10, leaseMs: 60_000 })).map((d) => d.id)).toEqual([second]);
      expect(await store.listOutages({ open: true, limit: 10 })).toEqual([]);
      expect(await store.closeOutage(DEST, Date.now(), new Map([['a', 100]]))).toBeNull();
    });

    it('puts a redriven delivery of an ordered rule at the back of its key', async () => {
      const store = await open();
      await store.openOutage(DEST, Date.now() - 1);
      const ids: number[] = [];
      for (const i of [1, 2]) {
        const { id: eventId } = await store.saveEvent(event(`ordered-redrive-${i}-${Math.random()}`, { deliveries: [forward('a', { orderKey: 'K' })] }));
        ids.push((await store.listDeliveries({ eventId }, { limit: 1 })).items[0]!.id);
      }
      const [head] = await store.claimDueDeliveries({ now: Date.now() + 60_000, limit: 100, leaseMs: 60_000 });
      expect(head!.id).toBe(ids[0]);
      await store.recordAttempt(head!.id, head!.leaseToken, { ...attempt(1, 'dead', 503), urlOrigin: DEST }, { state: 'dead', reason: 'retries exhausted', retryable: true });
      const closedAt = Date.now();
      expect((await store.closeOutage(DEST, closedAt, new Map([['a', 0]])))!.redriven).toEqual([ids[0]]);
      // The redriven head now waits behind the row that was queued after it.
      const next = await store.claimDueDeliveries({ now: closedAt + 120_000, limit: 100, leaseMs: 60_000 });
      expect(next.map((d) => d.id)).toEqual([ids[1]]);
    });

    it('probes an open outage with its oldest dead letter, once per interval over every caller', async () => {
      const store = await open();
      const { outage } = await store.openOutage(DEST, Date.now() - 1);
      const oldest = await deadLetter(store, 'a', { retryable: true });
      await deadLetter(store, 'a', { retryable: true });
      const now = Date.now();
      const probes = await Promise.all([1, 2].map(() => store.probeOutage(outage.id, now, { minIntervalMs: 60_000, ruleIds: ['a'] })));
      expect(probes.sort()).toEqual([null, oldest].sort());
      expect(await store.getDelivery(oldest)).toMatchObject({ state: 'pending', redrives: [{ outageId: outage.id, kind: 'probe' }] });
      expect(await store.probeOutage(outage.id, now + 60_000, { minIntervalMs: 60_000, ruleIds: ['b'] })).toBeNull(); // no dead letter of rule b
      expect(await store.listOutages({ limit: 10 })).toMatchObject([{ id: outage.id, lastProbeAt: now + 60_000, redriven: 1 }]);
    });
  });

  describe('jobs', () => {
    it('keeps a job\'s progress, lists newest first, and never overwrites a cancel with done', async () => {
      const store = await open();
      const job = await store.createJob({ kind: 'replay', filter: { event: 'transfer:succeeded' }, ruleId: null, total: 10, startedAt: 1_000, nodeId: null });
      expect(job).toMatchObject({ nodeId: null, state: 'running', processed: 0, created: 0, failed: 0, total: 10, filter: { event: 'transfer:succeeded' }, finishedAt: null });
      expect(job.summary).toBeNull();
      const summary = { route: 'original', perRule: { fwd: 3 }, unknownRouting: 1 };
      await store.updateJobProgress(job.id, { total: 10, processed: 3, created: 2, failed: 1, summary });
      // A report without a summary keeps the last one given.
      await store.updateJobProgress(job.id, { total: 10, processed: 4, created: 3, failed: 1 });
      expect(await store.getJob(job.id)).toMatchObject({ processed: 4, created: 3, failed: 1, summary });
      expect(await store.finishJob(job.id, 'cancelled', null, 2_000)).toBe(true);
      expect(await store.finishJob(job.id, 'done', null, 3_000)).toBe(false);
      expect(await store.getJob(job.id)).toMatchObject({ state: 'cancelled', finishedAt: 2_000 });
      const second = await store.createJob({ kind: 'retry', filter: {}, ruleId: 'r', total: 1, startedAt: 4_000, nodeId: null });
      expect((await store.listJobs(10)).map((j) => j.id)).toEqual([second.id, job.id]);
      expect(await store.failOrphanedJobs('restarted', 5_000)).toBe(1); // no node runs a job without one
      expect(await store.getJob(second.id)).toMatchObject({ state: 'failed', error: 'restarted', finishedAt: 5_000 });
      expect(await store.getJob(second.id + 100)).toBeNull();
    });

    it('fails only the running jobs whose node is not live: gone, deregistered, or silent too long', async () => {
      const store = await open();
      await store.registerNode(node('node_live'));
      await store.registerNode(node('node_left'));
      await store.registerNode(node('node_silent', { heartbeatMs: 10 }));
      const jobOf = (nodeId: string | null) => store.createJob({ kind: 'retry', filter: {}, ruleId: null, total: 1, startedAt: 1_000, nodeId });
      const [live, left, silent, unknown] = await Promise.all([jobOf('node_live'), jobOf('node_left'), jobOf('node_silent'), jobOf('node_never_registered')]);
      await store.deregisterNode('node_left');
      await waitUntilNotLive(store, 'node_silent');
      expect(await store.failOrphanedJobs('node stopped', 2_000)).toBe(3);
      expect(await store.getJob(live.id)).toMatchObject({ state: 'running', nodeId: 'node_live' });
      for (const job of [left, silent, unknown]) expect(await store.getJob(job.id)).toMatchObject({ state: 'failed', error: 'node stopped' });
      expect(await store.failOrphanedJobs('again', 3_000)).toBe(0);
    });
  });

  describe('the node registry', () => {
    it('lists registered nodes oldest first with their heartbeat; a heartbeat updates the rule set; deregistered nodes leave', async () => {
      const store = await open();
      const before = Date.now();
      await store.registerNode(node('node_b', { startedAt: 2_000, role: 'worker' }));
      await store.registerNode(node('node_a', { startedAt: 1_000, ruleSetHash: null }));
      const listed = await store.listLiveNodes();
      expect(listed.map((n) => n.id)).toEqual(['node_a', 'node_b']);
      expect(listed[1]).toEqual({ ...node('node_b', { startedAt: 2_000, role: 'worker' }), lastHeartbeat: expect.any(Number) });
      // The store's clock (PostgreSQL: the database's) in the caller's: within the measured offset's error.
      for (const n of listed) expect(Math.abs(n.lastHeartbeat - before)).toBeLessThan(5_000);
      expect(await store.heartbeatNode('node_a', 'hash-2')).toBe(true);
      expect((await store.listLiveNodes())[0]).toMatchObject({ id: 'node_a', ruleSetHash: 'hash-2' });
      await store.deregisterNode('node_b');
      expect((await store.listLiveNodes()).map((n) => n.id)).toEqual(['node_a']);
      expect(await store.heartbeatNode('node_b', 'hash-2')).toBe(false); // gone: the node registers again
      await store.registerNode(node('node_a', { role: 'receiver' })); // the same id again replaces its row
      expect(await store.listLiveNodes()).toEqual([expect.objectContaining({ id: 'node_a', role: 'receiver' })]);
    });

    it('a node is no longer live after three of its heartbeat intervals without a heartbeat, and live again after one', async () => {
      const store = await open();
      await store.registerNode(node('node_slow', { heartbeatMs: 60_000 }));
      await store.registerNode(node('node_fast', { heartbeatMs: 10 }));
      await waitUntilNotLive(store, 'node_fast');
      expect((await store.listLiveNodes()).map((n) => n.id)).toEqual(['node_slow']);
      expect(await store.heartbeatNode('node_fast', null)).toBe(true);
      expect((await store.listLiveNodes()).map((n) => n.id).sort()).toEqual(['node_fast', 'node_slow']);
    });

    it('keeps the nodes that are gone: one that left says when, one that went silent is missing since its last heartbeat', async () => {
      const store = await open();
      await store.registerNode(node('node_live', { heartbeatMs: 60_000 }));
      await store.registerNode(node('node_left', { heartbeatMs: 60_000, host: 'web-2' }));
      await store.registerNode(node('node_dead', { heartbeatMs: 10, role: 'worker' }));
      const lastBeat = (await store.listLiveNodes()).find((n) => n.id === 'node_dead')!.lastHeartbeat;
      await waitUntilNotLive(store, 'node_dead');
      const beforeLeaving = Date.now();
      await store.deregisterNode('node_left');
      const gone = await store.listGoneNodes(10);
      expect(gone.map((n) => [n.id, n.left])).toEqual([['node_left', true], ['node_dead', false]]);
      expect(gone[0]).toMatchObject({ host: 'web-2', pid: 4242, role: 'all', version: '1.2.3', startedAt: 1_000 });
      expect(Math.abs(gone[0]!.since - beforeLeaving)).toBeLessThan(5_000);
      expect(gone[1]!.since).toBe(lastBeat);
      expect((await store.listLiveNodes()).map((n) => n.id)).toEqual(['node_live']);
      expect(await store.listGoneNodes(1)).toHaveLength(1);
      // A node that left stays left; registering the id again makes it live and no longer gone.
      expect(await store.heartbeatNode('node_left', null)).toBe(false);
      await store.registerNode(node('node_left'));
      expect((await store.listGoneNodes(10)).map((n) => n.id)).toEqual(['node_dead']);
    });

    it('orphans the running jobs of a node that left at once', async () => {
      const store = await open();
      await store.registerNode(node('node_job', { heartbeatMs: 60_000 }));
      const job = await store.createJob({ kind: 'retry', filter: {}, ruleId: null, nodeId: 'node_job', total: 1, startedAt: 1_000 });
      expect(await store.failOrphanedJobs('interrupted', 2_000)).toBe(0);
      await store.deregisterNode('node_job');
      expect(await store.failOrphanedJobs('interrupted', 2_000)).toBe(1);
      expect(await store.getJob(job.id)).toMatchObject({ state: 'failed', error: 'interrupted' });
    });
  });

  describe('leases', () => {
    it('one holder at a time; the holder renews and releases; an expired lease goes to the next taker', async () => {
      const store = await open();
      expect(await store.acquireLease('retention', 'node_a', 60_000)).toBe(true);
      expect(await store.acquireLease('retention', 'node_b', 60_000)).toBe(false);
      expect(await store.acquireLease('other-work', 'node_b', 60_000)).toBe(true); // leases are by name
      expect(await store.acquireLease('retention', 'node_a', 60_000)).toBe(true); // renewed
      await store.releaseLease('retention', 'node_b'); // not its lease: nothing happens
      expect(await store.acquireLease('retention', 'node_b', 60_000)).toBe(false);
      await store.releaseLease('retention', 'node_a');
      expect(await store.acquireLease('retention', 'node_b', 20)).toBe(true);
      const deadline = Date.now() + 5_000;
      while (!(await store.acquireLease('retention', 'node_a', 60_000))) {
        expect(Date.now()).toBeLessThan(deadline);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      expect(await store.acquireLease('retention', 'node_b', 60_000)).toBe(false);
    });

    it('of many concurrent takers exactly one gets a free lease', async () => {
      const store = await open();
      const taken = await Promise.all(Array.from({ length: 8 }, (_, i) => store.acquireLease('retention', `node_${i}`, 60_000)));
      expect(taken.filter(Boolean)).toHaveLength(1);
    });
  });

  describe('settings and console sessions shared by every node', () => {
    it('keeps the first value claimed under a name; concurrent claims all get that one value', async () => {
      const store = await open();
      expect(await store.getSetting('admin_token')).toBeNull();
      const claims = await Promise.all(['a', 'b', 'c', 'd'].map((value) => store.claimSetting('admin_token', value, 1_000)));
      expect(new Set(claims).size).toBe(1);
      expect(['a', 'b', 'c', 'd']).toContain(claims[0]);
      expect(await store.claimSetting('admin_token', 'later', 2_000)).toBe(claims[0]);
      expect(await store.getSetting('admin_token')).toBe(claims[0]);
      expect(await store.claimSetting('source_secret/checkout', 'other', 2_000)).toBe('other');
    });

    it('finds a session until it expires or is deleted', async () => {
      const store = await open();
      const now = Date.now();
      await store.saveConsoleSession({ idHash: 'h1', csrf: 'c1', expiresAt: now + 60_000 }, 10, now);
      await store.saveConsoleSession({ idHash: 'h2', csrf: 'c2', expiresAt: now + 60_000 }, 10, now);
      expect(await store.getConsoleSession('h1', now)).toEqual({ idHash: 'h1', csrf: 'c1', expiresAt: now + 60_000 });
      expect(await store.getConsoleSession('h1', now + 60_000)).toBeNull();
      expect(await store.getConsoleSession('nope', now)).toBeNull();
      await store.deleteConsoleSession('h1');
      await store.deleteConsoleSession('h1');
      expect(await store.getConsoleSession('h1', now)).toBeNull();
      expect(await store.getConsoleSession('h2', now)).toMatchObject({ csrf: 'c2' });
    });

    it('drops expired sessions and, beyond the number to keep, the oldest, when one starts', async () => {
      const store = await open();
      const now = Date.now();
      await store.saveConsoleSession({ idHash: 'expired', csrf: 'c', expiresAt: now + 1_000 }, 3, now);
      for (let i = 1; i <= 4; i++) await store.saveConsoleSession({ idHash: `s${i}`, csrf: 'c', expiresAt: now + 10_000 + i }, 3, now + 2_000);
      const live = await Promise.all(['expired', 's1', 's2', 's3', 's4'].map(async (h) => (await store.getConsoleSession(h, now)) !== null));
      expect(live).toEqual([false, false, true, true, true]);
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
