import { describe, expect, it } from 'vitest';
import type { EventSearch } from '../../src/store/event-store.js';
import type { NewEvents, StreamPosition } from '../../src/store/new-event-store.js';
import type { Store } from '../../src/store/store.js';
import { event, readNewSettled, storeOpener, type StoreFactory } from './contract-helpers.js';

export function newEventStoreContract(factory: StoreFactory): void {
  const open = storeOpener(factory);

  describe('NewEventStore: new events in commit order (event streams)', () => {
    /**
     * Reads everything after `from`, `limit` at a time, as a stream does; while events are held back (on
     * PostgreSQL, behind any write transaction of the server still open, other databases' too) it reads again.
     */
    async function readAllWith<E extends { id: number }>(read: (position: StreamPosition, limit: number) => Promise<NewEvents<E>>, from: StreamPosition, limit = 2): Promise<{ events: E[]; position: StreamPosition }> {
      const events: E[] = [];
      let position = from;
      const deadline = Date.now() + 20_000;
      for (;;) {
        const got = await read(position, limit);
        events.push(...got.events);
        position = got.position;
        if (got.events.length < limit && (!got.heldBack || Date.now() > deadline)) return { events, position };
        if (got.events.length < limit) await new Promise((resolve) => setTimeout(resolve, 10));
      }
    }

    async function readAll(store: Store, from: StreamPosition, filter: EventSearch = {}): Promise<{ ids: number[]; position: StreamPosition }> {
      const { events, position } = await readAllWith((at, limit) => store.readNewEvents(filter, at, limit, false), from);
      return { ids: events.map((e) => e.id), position };
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
      const bare = (await readNewSettled(store, start, 10, false)).events;
      const whole = (await readNewSettled(store, start, 10, true)).events;
      expect(bare.map((e) => Object.keys(e).filter((k) => k === 'body' || k === 'headers'))).toEqual([[], []]);
      expect(bare[0]).toMatchObject({ id: saved.id, transferId: 'bytes', bodyBytes: body.length, importedAt: null });
      expect(bare[1]).toMatchObject({ transferId: 'imported-later', importedAt: 9_000 });
      expect(whole[0]!.body.equals(body)).toBe(true);
      expect(whole[0]!.headers).toEqual({ 'x-service-signature': 'abc' });
      expect(whole.map(({ body: _b, headers: _h, ...summary }) => summary)).toEqual(bare);
    });

    it('reads for schema learning the same events in the same order, with only what learning needs', async () => {
      const store = await open();
      const body = Buffer.from('{"event":"transfer:succeeded","result":{"id":"learn-a"}}  ');
      const a = await store.saveEvent(event('learn-a', { body, headers: { 'x-service-signature': 'abc' }, receivedAt: 7_000 }));
      const start = await store.streamPosition({ afterEventId: a.id - 1 });
      const b = await store.saveEvent(event('learn-b', { event: 'order:archived', validation: 'unrecognised' }));
      const copy = await store.saveEditedCopy({ ...event('learn-a'), editedFrom: a.id, editedAt: Date.now(), via: 'api' });
      const streamed = await readNewSettled(store, start, 10, false);
      // Two at a time, passing each position on, as the learner reads.
      const { events: learned, position } = await readAllWith((at, limit) => store.readEventsToLearn(at, limit), start);
      expect(learned.map((e) => e.id)).toEqual(streamed.events.map((e) => e.id));
      expect(learned.map((e) => e.id)).toEqual([a.id, b.id, copy]);
      expect(Object.keys(learned[0]!).sort()).toEqual(['body', 'edited', 'event', 'id', 'receivedAt', 'source']);
      expect(learned[0]).toMatchObject({ id: a.id, source: 'checkout', event: 'transfer:succeeded', receivedAt: 7_000, edited: false });
      expect(learned[0]!.body.equals(body)).toBe(true);
      expect(learned[1]).toMatchObject({ event: 'order:archived', edited: false });
      expect(learned[2]).toMatchObject({ id: copy, edited: true });
      expect((await store.readEventsToLearn(position, 10)).events).toEqual([]);
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
}
