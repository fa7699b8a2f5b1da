import { describe, expect, it } from 'vitest';
import type { NewEvent } from '../../src/store/event-store.js';
import type { Store } from '../../src/store/store.js';
import { perTestClock, storeOpener, type StoreFactory } from './contract-helpers.js';

/** What every Store promises about quarantine, through the interface alone. */

const ISSUES = { from: 'schema' as const, issues: [{ path: 'result.totalPriceUsd', message: 'expected number, received string', code: 'invalid_type' }] };

function held(transferId: string, overrides: Partial<NewEvent> = {}): NewEvent {
  return {
    source: 'checkout', event: 'transfer:succeeded', transferId, checkoutId: null, email: null, walletAddress: null, validation: 'invalid',
    receivedAt: 1_000, headers: { 'x-a': '1' }, body: Buffer.from(`{"event":"transfer:succeeded","result":{"id":"${transferId}","totalPriceUsd":"1"}}`),
    issues: ISSUES, held: true, ...overrides,
  };
}

const forward = (ruleId: string, orderKey?: string) => ({ ruleId, ruleSetHash: 'h2', body: null, contentType: 'application/json', ...(orderKey && { orderKey }) });

export function quarantineStoreContract(factory: StoreFactory): void {
  const clock = perTestClock();
  const open = storeOpener(factory, clock);

  describe('quarantine', () => {
    it('stores a held event with its issues, once per key, and lists it by state', async () => {
      const store = await open();
      const first = await store.saveEvent(held('sha256:aa'));
      const repeat = await store.saveEvent(held('sha256:aa', { receivedAt: 2_000 }));
      expect(repeat).toEqual({ id: first.id, duplicate: true, receivedCount: 2 });
      const normal = await store.saveEvent({ ...held('t-2'), validation: 'valid', issues: null, held: false });
      const event = await store.getEvent(first.id);
      expect(event).toMatchObject({ quarantine: 'held', issues: ISSUES, release: null, validation: 'invalid' });
      expect(await store.getEvent(normal.id)).toMatchObject({ quarantine: null, issues: null, release: null });
      const list = await store.listEvents({ quarantine: 'held' }, { limit: 10 });
      expect(list.items.map((e) => [e.id, e.quarantine, e.issues?.from])).toEqual([[first.id, 'held', 'schema']]);
      expect((await store.listEvents({ quarantine: 'released' }, { limit: 10 })).items).toEqual([]);
      expect(await store.countEvents({ quarantine: 'held' })).toBe(1);
    });

    it('counts held events, not released ones, up to the limit asked', async () => {
      const store = await open();
      expect(await store.countHeldEvents(10)).toBe(0);
      const ids = [];
      for (const key of ['sha256:c1', 'sha256:c2', 'sha256:c3']) ids.push((await store.saveEvent(held(key))).id);
      await store.saveEvent({ ...held('t-c'), issues: null, held: false });
      expect(await store.countHeldEvents(10)).toBe(3);
      expect(await store.countHeldEvents(2)).toBe(2);
      await store.releaseEvent(ids[0]!, { releasedAt: 5_000, releasedBy: 'api', forced: true }, { ruleSetHash: 'h2', deliveries: [] });
      expect(await store.countHeldEvents(10)).toBe(2);
    });

    it('releases once: outbox rows with the release, a second release (or a concurrent one) changes nothing', async () => {
      const store = await open();
      const { id } = await store.saveEvent(held('sha256:bb'));
      const release = { releasedAt: 5_000, releasedBy: 'alice', forced: true };
      const outcomes = await Promise.all([
        store.releaseEvent(id, release, { ruleSetHash: 'h2', deliveries: [forward('a')] }),
        store.releaseEvent(id, { ...release, releasedBy: 'bob' }, { ruleSetHash: 'h2', deliveries: [forward('a')] }),
      ]);
      expect(outcomes.filter((o) => o.released)).toHaveLength(1);
      expect(outcomes.find((o) => !o.released)).toEqual({ released: false, reason: 'released' });
      const deliveries = await store.listDeliveries({ eventId: id }, { limit: 10 });
      expect(deliveries.items).toEqual([expect.objectContaining({ ruleId: 'a', origin: 'ingest', state: 'pending' })]);
      const event = await store.getEvent(id);
      expect(event).toMatchObject({ quarantine: 'released', ruleSetHash: 'h2', release: { releasedAt: 5_000, forced: true } });
      expect(['alice', 'bob']).toContain(event!.release!.releasedBy);
      const normal = await store.saveEvent({ ...held('t-3'), issues: null, held: false });
      expect(await store.releaseEvent(normal.id, release, { ruleSetHash: 'h2', deliveries: [] })).toEqual({ released: false, reason: 'not-held' });
      expect(await store.releaseEvent(999_999, release, { ruleSetHash: 'h2', deliveries: [] })).toEqual({ released: false, reason: 'missing' });
    });

    it('a released event joins the back of its ordered key', async () => {
      const store = await open();
      const { id: heldId } = await store.saveEvent(held('sha256:cc'));
      const { id: earlier } = await store.saveEvent({ ...held('t-4'), issues: null, held: false, deliveries: [forward('ordered', 'k')] });
      await store.releaseEvent(heldId, { releasedAt: 6_000, releasedBy: 'api', forced: false }, { ruleSetHash: 'h2', deliveries: [forward('ordered', 'k')] });
      // Only the key's head is claimable: the earlier event's delivery.
      clock.set(Date.now() + 60_000);
      const claimed = await store.claimDueDeliveries({ limit: 10, leaseMs: 60_000 });
      expect(claimed.map((d) => d.eventId)).toEqual([earlier]);
    });

    it('export, import and copy keep the quarantine state, issues and release', async () => {
      const source = await open();
      const { id } = await source.saveEvent(held('sha256:dd'));
      await source.saveEvent(held('sha256:ee'));
      await source.releaseEvent(id, { releasedAt: 7_000, releasedBy: 'carol', forced: true }, { ruleSetHash: 'h2', deliveries: [] });
      const exported = await source.listEventsForExport({}, 10);
      const target = await open();
      expect(await target.importEvents(exported.map(({ id: _id, importedAt: _at, ...e }) => e))).toEqual({ imported: 2, duplicates: 0, seenBefore: 0 });
      const imported = await target.listEventsForExport({}, 10);
      expect(imported.map((e) => [e.transferId, e.quarantine, e.issues, e.release])).toEqual(exported.map((e) => [e.transferId, e.quarantine, e.issues, e.release]));
      const copy = await open();
      await copy.writeCopyRows('events', await source.readCopyRows('events', null, 10));
      expect((await copy.getEvent(id))).toMatchObject({ quarantine: 'released', issues: ISSUES, release: { releasedAt: 7_000, releasedBy: 'carol', forced: true } });
      expect(await copy.countEvents({ quarantine: 'held' })).toBe(1);
    });

    it('retention prunes held events by age like any other', async () => {
      const store: Store = await open();
      await store.saveEvent(held('sha256:ff'));
      expect(await store.pruneEventsOlderThan(1_500, 10)).toBe(1);
      expect(await store.countEvents({ quarantine: 'held' })).toBe(0);
    });
  });
}
