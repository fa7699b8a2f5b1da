import { describe, expect, it } from 'vitest';
import { copyStore } from '../../src/store/copy-store.js';
import type { ImportedEvent } from '../../src/store/event-archive.js';
import type { NewEvent } from '../../src/store/event-store.js';
import type { Store } from '../../src/store/store.js';
import { perTestClock, storeOpener, type StoreFactory } from './contract-helpers.js';

/**
 * The ledger of seen keys through the Store interface alone: a key outlives its event, so a repeat after
 * retention removed the event is still a duplicate, an import reports it as seen before, an edited copy's
 * number is never given twice, and the ledger forgets only removed events' keys past its own age.
 */

const DAY_MS = 24 * 60 * 60 * 1000;

function event(transferId: string, overrides: Partial<NewEvent> = {}): NewEvent {
  return {
    source: 'checkout', event: 'transfer:succeeded', transferId, checkoutId: null, email: null, walletAddress: null, validation: 'valid',
    receivedAt: Date.now(), headers: {}, body: Buffer.from(`{"event":"transfer:succeeded","result":{"id":"${transferId}"}}`), ...overrides,
  };
}

function imported(transferId: string, overrides: Partial<ImportedEvent> = {}): ImportedEvent {
  const { deliveries: _none, ...e } = event(transferId);
  return { ...e, lastReceivedAt: e.receivedAt, receivedCount: 1, ...overrides };
}

const forward = { ruleId: 'fwd', ruleSetHash: 'h1', body: null, contentType: 'application/json' };

/** Removes every event (none has a pending delivery in these tests). */
async function pruneAll(store: Store): Promise<void> {
  while ((await store.pruneOldestEvents(100)) > 0);
}

export function seenKeysContract(factory: StoreFactory): void {
  const clock = perTestClock();
  const open = storeOpener(factory, clock);

  describe('the ledger of seen keys', () => {
    it('answers a repeat of an event retention removed as a duplicate of it, storing and planning nothing', async () => {
      const store = await open();
      expect(await store.backfillSeenKeys(10)).toBe(0); // a new store has no events from before its ledger
      const first = await store.saveEvent(event('tx-1', { deliveries: [forward] }));
      clock.set(Date.now() + 60_000);
      const [claimed] = await store.claimDueDeliveries({ limit: 1, leaseMs: 60_000 });
      await store.recordAttempt(claimed!.id, claimed!.leaseToken, {
        attempt: 1, startedAt: Date.now(), durationMs: 1, urlOrigin: 'http://127.0.0.1:9', status: 200, errorCode: null, errorMessage: null, responseExcerpt: null, outcome: 'delivered',
      }, { state: 'delivered' });
      await pruneAll(store);
      expect(await store.getEvent(first.id)).toBeNull();

      const batch = await Promise.all([store.saveEvent(event('tx-1', { deliveries: [forward] })), store.saveEvent(event('tx-2', { deliveries: [forward] }))]);

      expect(batch[0]).toEqual({ id: first.id, duplicate: true, receivedCount: null });
      expect(batch[1]).toMatchObject({ duplicate: false, receivedCount: 1 });
      expect(await store.countEvents({})).toBe(1);
      expect((await store.listDeliveries({}, { limit: 10 })).items.map((d) => d.eventId)).toEqual([batch[1]!.id]);
      expect(await store.findSeenKey({ source: 'checkout', event: 'transfer:succeeded', transferId: 'tx-1' })).toMatchObject({ eventId: first.id });
    });

    it('reports an import of removed events as seen before, apart from duplicates and new ones', async () => {
      const store = await open();
      const old = Date.now() - DAY_MS;
      const archive = [imported('old-1', { receivedAt: old }), imported('old-2', { receivedAt: old }), imported('kept')];
      expect(await store.importEvents(archive, { importedAt: null })).toEqual({ imported: 3, duplicates: 0, seenBefore: 0 });
      expect(await store.pruneOldestEvents(2)).toBe(2);

      const again = await store.importEvents([imported('old-1'), imported('old-2'), imported('kept'), imported('new')]);

      expect(again).toEqual({ imported: 1, duplicates: 1, seenBefore: 2 });
      expect((await store.listEvents({}, { limit: 10 })).items.map((e) => e.transferId).sort()).toEqual(['kept', 'new']);
    });

    it('keys edited copies by their edit number: a removed copy\'s number is not given again', async () => {
      const store = await open();
      const original = await store.saveEvent(event('tx-e'));
      const copy = (editedAt: number) => ({ ...event('tx-e'), editedFrom: original.id, editedAt, via: 'api' as const });
      await store.saveEditedCopy(copy(Date.now()));
      await pruneAll(store);

      const next = await store.saveEditedCopy(copy(Date.now()));

      expect((await store.getEvent(next))!.edit!.number).toBe(2);
      expect(await store.saveEvent(event('tx-e'))).toMatchObject({ id: original.id, duplicate: true });
      const archive = [imported('tx-e', { edit: { editedFrom: original.id, editedAt: 1, via: 'api', number: 1 } })];
      expect(await store.importEvents(archive)).toEqual({ imported: 0, duplicates: 0, seenBefore: 1 });
    });

    it('forgets the keys of removed events older than the cutoff, never the key of a stored event', async () => {
      const store = await open();
      const old = Date.now() - 100 * DAY_MS;
      await store.importEvents([imported('gone', { receivedAt: old })], { importedAt: null });
      // A pending delivery keeps its event from retention.
      await store.saveEvent(event('stored', { receivedAt: old, deliveries: [forward] }));
      await store.importEvents([imported('young', { receivedAt: old })]);
      await pruneAll(store);
      expect((await store.listEvents({}, { limit: 10 })).items.map((e) => e.transferId)).toEqual(['stored']);

      let forgotten = 0;
      for (let n = await store.pruneSeenKeys(Date.now() - 90 * DAY_MS, 1); n > 0; n = await store.pruneSeenKeys(Date.now() - 90 * DAY_MS, 1)) forgotten += n;

      expect(forgotten).toBe(1);
      const seen = async (transferId: string) => (await store.findSeenKey({ source: 'checkout', event: 'transfer:succeeded', transferId })) !== null;
      expect([await seen('gone'), await seen('stored'), await seen('young')]).toEqual([false, true, true]);
      // A key the ledger forgot is new again.
      expect(await store.saveEvent(event('gone'))).toMatchObject({ duplicate: false });
    });

    it('travels with `store copy`: the copy answers a removed event\'s repeat as a duplicate', async () => {
      const source = await open();
      const first = await source.saveEvent(event('tx-c'));
      await source.saveEvent(event('tx-d'));
      await source.pruneOldestEvents(1);
      const target = await open();

      const result = await copyStore(source, target, { batchSize: 1, shouldStop: () => false, onProgress: () => {}, now: Date.now });

      // The removed event's key; the kept event brings its own.
      expect(result.tables.seenKeys.source).toBe(1);
      expect(await target.saveEvent(event('tx-c'))).toEqual({ id: first.id, duplicate: true, receivedCount: null });
      expect(await target.importEvents([imported('tx-c')])).toEqual({ imported: 0, duplicates: 0, seenBefore: 1 });
      // Copied again: nothing new, nothing in conflict.
      const again = await copyStore(source, target, { batchSize: 10, shouldStop: () => false, onProgress: () => {}, now: Date.now });
      expect(again.tables.seenKeys.added).toBe(0);
    });
  });
}
