import { afterAll, describe, expect, it } from 'vitest';
import { listMigrations, migrate } from '../../../src/store/sqlite/migrate.js';
import { openDatabase, SqliteStore } from '../../../src/store/sqlite/sqlite-store.js';
import type { NewEvent } from '../../../src/store/event-store.js';
import { makeTempDir, removeTempDirs } from '../../helpers/temp-dir.js';

afterAll(() => removeTempDirs());

const BODY = Buffer.from('{"event":"transfer:succeeded","result":{"id":"tr-1"}}');

function received(receivedAt: number): NewEvent {
  return {
    source: 'checkout', event: 'transfer:succeeded', transferId: 'tr-1', checkoutId: null, email: null, walletAddress: null,
    validation: 'valid', receivedAt, headers: { 'x-service-signature': 'sig' }, body: BODY, ruleSetHash: 'set-a',
    deliveries: [{ ruleId: 'fwd', ruleSetHash: 'set-a', body: null, contentType: 'application/json' }],
  };
}

// What every store does with rule sets and edited copies is in the contract suite (test/contract/).
describe('migration 008', () => {
  it('rebuilds the events table without losing events or the deliveries that reference them', async () => {
    const dataDir = makeTempDir();
    const db = openDatabase({ dataDir, durability: 'normal' });
    migrate(db, listMigrations().filter((m) => m.version <= 7));
    const eventId = Number(db.prepare(`INSERT INTO events (source, event, transfer_id, validation, received_at, last_received_at, headers, body)
      VALUES ('checkout', 'transfer:succeeded', 'tr-1', 'valid', 1000, 1000, '{}', ?)`).run(BODY).lastInsertRowid);
    db.prepare(`INSERT INTO deliveries (event_id, rule_id, rule_set_hash, state, content_type, created_at, updated_at)
      VALUES (?, 'fwd', 'old', 'dead', 'application/json', 1000, 1000)`).run(eventId);
    db.close();

    const store = new SqliteStore({ dataDir, durability: 'normal' });
    try {
      expect(await store.getEvent(eventId)).toMatchObject({ transferId: 'tr-1', ruleSetHash: null, edit: null });
      expect((await store.listDeliveries({ eventId }, { limit: 10 })).items.map((d) => d.ruleSetHash)).toEqual(['old']);
      expect(store.db.pragma('foreign_keys', { simple: true })).toBe(1);
      // The key still makes a repeat a duplicate.
      expect(await store.saveEvent({ ...received(2_000), deliveries: [] })).toMatchObject({ id: eventId, duplicate: true });
    } finally {
      await store.close();
    }
  });
});
