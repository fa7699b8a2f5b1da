import { describe, expect, it } from 'vitest';
import { event, storeOpener, type StoreFactory } from './contract-helpers.js';

export function eventArchiveContract(factory: StoreFactory): void {
  const open = storeOpener(factory);

  describe('EventArchive: export and import', () => {
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
      expect(await target.importEvents(imported.slice(0, 2), { importedAt: null })).toEqual({ imported: 2, duplicates: 0, seenBefore: 0 });
      expect(await target.importEvents(imported, { importedAt: null })).toEqual({ imported: 1, duplicates: 2, seenBefore: 0 });
      const copies = await target.listEventsForExport({}, 10);
      expect(copies.map((e) => Buffer.compare(e.body, exported.find((x) => x.transferId === e.transferId)!.body))).toEqual([0, 0, 0]);
      expect(copies.every((e) => e.importedAt === null)).toBe(true);
      expect(await target.countEvents({ receivedTo: 2_500 })).toBe(2);
    });
  });
}
