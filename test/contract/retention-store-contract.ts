import { describe, expect, it } from 'vitest';
import { event, forward, storeOpener, type StoreFactory } from './contract-helpers.js';

export function retentionStoreContract(factory: StoreFactory): void {
  const open = storeOpener(factory);

  describe('RetentionStore', () => {
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

  });
}
