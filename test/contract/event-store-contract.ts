import { describe, expect, it } from 'vitest';
import { MAX_RECEIVED_COUNT } from '../../src/store/event-store.js';
import type { NewEvent } from '../../src/store/event-store.js';
import { event, forward, readNewSettled, storeOpener, TestClock, type StoreFactory } from './contract-helpers.js';

export function eventStoreContract(factory: StoreFactory): void {
  const open = storeOpener(factory);

  describe('EventStore: saving events', () => {
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
      expect(shared.map((s) => s.receivedCount!).sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
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
      const streamed = await readNewSettled(store, start, 10, false);
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

  describe('EventStore: key semantics: two different strings are two keys, the same string one', () => {
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
      const read = await readNewSettled(store, { tx: null, id: 0 }, 100, false);
      expect(read.events.map((e) => e.transferId)).toEqual(KEYS);
      // Another store takes them through import as the same keys: none is new there twice.
      const target = await open();
      const imported = exported.map(({ id: _id, importedAt: _importedAt, ...e }) => e);
      expect(await target.importEvents(imported)).toEqual({ imported: KEYS.length, duplicates: 0, seenBefore: 0 });
      expect(await target.importEvents(imported)).toEqual({ imported: 0, duplicates: KEYS.length, seenBefore: 0 });
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
      expect(both.every((r) => r.duplicate && r.receivedCount! <= MAX_RECEIVED_COUNT)).toBe(true);
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

  describe('EventStore: listing and searching events', () => {
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

  describe('EventStore: edited copies', () => {
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
      const clock = new TestClock();
      const store = await open(clock);
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
      clock.set(now + 1);
      const claimed = await store.claimDueDeliveries({ limit: 10, leaseMs: 60_000 });
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
      expect(await target.importEvents(imported)).toEqual({ imported: 2, duplicates: 0, seenBefore: 0 });
      expect(await target.importEvents(imported)).toEqual({ imported: 0, duplicates: 2, seenBefore: 0 });
      const copies = await target.listEventsForExport({}, 10);
      expect(copies.map((e) => [e.ruleSetHash, e.edit && { ...e.edit, editedFrom: 0 }])).toEqual([
        ['set-a', null],
        ['set-b', { editedFrom: 0, editedAt: 5_000, via: 'console', number: 1 }],
      ]);
    });
  });
}
