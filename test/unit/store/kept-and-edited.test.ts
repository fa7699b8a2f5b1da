import { afterAll, describe, expect, it } from 'vitest';
import { listMigrations, migrate } from '../../../src/store/sqlite/migrate.js';
import { openDatabase, SqliteStore } from '../../../src/store/sqlite/sqlite-store.js';
import type { NewEvent } from '../../../src/store/store.js';
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

describe('rule sets kept by hash', () => {
  it('keeps a rule set once: saving the same hash again keeps the first one', async () => {
    const store = new SqliteStore({ dataDir: makeTempDir(), durability: 'normal' });
    try {
      expect(await store.getRuleSet('abc')).toBeNull();
      await store.saveRuleSet({ hash: 'abc', kind: 'loaded', rules: [{ id: 'r', file: 'rules/r.yaml', line: 1, definition: { id: 'r' } }], firstLoadedAt: 1_000 });
      await store.saveRuleSet({ hash: 'abc', kind: 'loaded', rules: [], firstLoadedAt: 2_000 });
      expect(await store.getRuleSet('abc')).toEqual({
        hash: 'abc', kind: 'loaded', rules: [{ id: 'r', file: 'rules/r.yaml', line: 1, definition: { id: 'r' } }], firstLoadedAt: 1_000,
      });
    } finally {
      await store.close();
    }
  });
});

describe('edited copies', () => {
  it('stores copies of one transfer beside the original, numbered; a real repeat of the original stays a duplicate', async () => {
    const store = new SqliteStore({ dataDir: makeTempDir(), durability: 'normal' });
    try {
      const original = await store.saveEvent(received(1_000));
      const edited = { ...received(0), body: Buffer.from('{"event":"transfer:succeeded","result":{"id":"tr-1","x":1}}'), deliveries: [] };
      const first = await store.saveEditedCopy({ ...edited, editedFrom: original.id, editedAt: 5_000, via: 'cli' });
      const second = await store.saveEditedCopy({ ...edited, editedFrom: original.id, editedAt: 6_000, via: 'console', validation: 'invalid' });
      expect(new Set([original.id, first, second]).size).toBe(3);

      const repeat = await store.saveEvent(received(9_000));
      expect(repeat).toEqual({ id: original.id, duplicate: true, receivedCount: 2 });

      const stored = (await store.getEvent(original.id))!;
      expect(stored.body.equals(BODY)).toBe(true);
      expect(stored).toMatchObject({ edit: null, ruleSetHash: 'set-a' });
      expect(await store.getEvent(first)).toMatchObject({ transferId: 'tr-1', edit: { editedFrom: original.id, editedAt: 5_000, via: 'cli', number: 1 }, receivedAt: 5_000 });
      expect(await store.getEvent(second)).toMatchObject({ validation: 'invalid', edit: { via: 'console', number: 2 } });

      // Listed as such, and found by the transfer id they carry.
      const page = await store.searchEvents({ transferId: 'tr-1' }, { limit: 10 });
      expect(page.items.map((e) => [e.id, e.edit?.number ?? 0])).toEqual([[second, 2], [first, 1], [original.id, 0]]);
      expect((await store.searchEvents({ validation: 'invalid' }, { limit: 10 })).items.map((e) => e.id)).toEqual([second]);
    } finally {
      await store.close();
    }
  });
});

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
