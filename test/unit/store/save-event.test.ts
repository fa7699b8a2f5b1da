import { afterAll, describe, expect, it } from 'vitest';
import { SqliteStore } from '../../../src/store/sqlite/sqlite-store.js';
import type { NewEvent } from '../../../src/store/store.js';
import { makeTempDir, removeTempDirs } from '../../helpers/temp-dir.js';

afterAll(() => removeTempDirs());

function delivery(receivedAt: number): NewEvent {
  return {
    source: 'checkout', event: 'transfer:succeeded', resultId: 'transfer-1', checkoutId: null, email: null, walletAddress: null,
    validation: 'valid', receivedAt, headers: {}, body: Buffer.from(`{"event":"transfer:succeeded","result":{"id":"transfer-1"},"n":${receivedAt}}`),
    deliveries: [{ ruleId: 'fwd', ruleSetHash: 'h', body: null, contentType: 'application/json' }],
  };
}

describe('saving an event', () => {
  it('stores the first delivery of a transfer with its deliveries; a repeat only counts and dates itself', async () => {
    const store = new SqliteStore({ dataDir: makeTempDir(), durability: 'normal' });
    try {
      const first = await store.saveEvent(delivery(1_000));
      expect(first).toEqual({ id: expect.any(Number), duplicate: false, receivedCount: 1 });
      const repeats = await Promise.all([store.saveEvent(delivery(5_000)), store.saveEvent(delivery(9_000))]);
      expect(repeats).toEqual([
        { id: first.id, duplicate: true, receivedCount: 2 },
        { id: first.id, duplicate: true, receivedCount: 3 },
      ]);
      const stored = (await store.getEvent(first.id))!;
      expect(stored).toMatchObject({ receivedAt: 1_000, lastReceivedAt: 9_000, receivedCount: 3 });
      expect(stored.body.toString()).toContain('"n":1000'); // the first bytes are kept, not overwritten
      expect((await store.listDeliveries({ eventId: first.id }, { limit: 10 })).items).toHaveLength(1);
    } finally {
      await store.close();
    }
  });
});
