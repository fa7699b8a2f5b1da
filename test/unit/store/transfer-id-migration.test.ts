import { afterAll, describe, expect, it } from 'vitest';
import { listMigrations, migrate } from '../../../src/store/sqlite/migrate.js';
import { openDatabase, SqliteStore } from '../../../src/store/sqlite/sqlite-store.js';
import { makeTempDir, removeTempDirs } from '../../helpers/temp-dir.js';

afterAll(removeTempDirs);

const BODY = Buffer.from('{"event":"transfer:succeeded","result":{"id":"tr-1"}}');

describe('migration 007: the store calls result.id the transfer id, as the API does', () => {
  it('keeps the ids of events stored under result_id: found by transfer id, and a repeat is a duplicate', async () => {
    const dataDir = makeTempDir();
    const db = openDatabase({ dataDir, durability: 'normal' });
    migrate(db, listMigrations().filter((m) => m.version <= 6));
    const eventId = Number(db.prepare(`INSERT INTO events (source, event, result_id, validation, received_at, last_received_at, headers, body)
      VALUES ('checkout', 'transfer:succeeded', 'tr-1', 'valid', 1000, 1000, '{}', ?)`).run(BODY).lastInsertRowid);
    db.close();

    const store = new SqliteStore({ dataDir, durability: 'normal' });
    try {
      expect(await store.getEvent(eventId)).toMatchObject({ transferId: 'tr-1' });
      expect((await store.listEvents({ transferId: 'tr-1' }, { limit: 10 })).items.map((e) => e.id)).toEqual([eventId]);
      const repeat = {
        source: 'checkout', event: 'transfer:succeeded', transferId: 'tr-1', checkoutId: null, email: null, walletAddress: null,
        validation: 'valid' as const, receivedAt: 2_000, headers: {}, body: BODY, deliveries: [],
      };
      expect(await store.saveEvent(repeat)).toMatchObject({ id: eventId, duplicate: true });
    } finally {
      await store.close();
    }
  });
});
