import { afterAll, describe, expect, it } from 'vitest';
import { listMigrations, migrate } from '../../../src/store/sqlite/migrate.js';
import { openDatabase, SqliteStore } from '../../../src/store/sqlite/sqlite-store.js';
import { makeTempDir, removeTempDirs } from '../../helpers/temp-dir.js';

afterAll(removeTempDirs);

describe('SQLite migrations 017 and 018: the ledger of seen keys', () => {
  it('upgrades a database with events in it: each keeps its id and is seen by its own row; retention puts the keys in the ledger', async () => {
    const dataDir = makeTempDir();
    const db = openDatabase({ dataDir, durability: 'normal' });
    migrate(db, listMigrations().filter((m) => m.version < 17));
    const insert = db.prepare(`INSERT INTO events (source, event, transfer_id, validation, received_at, last_received_at, headers, body, edit_number)
      VALUES ('checkout', 'transfer:succeeded', CAST(? AS TEXT), 'valid', 1000, 1000, '{}', '{}', ?)`);
    // A lone surrogate is stored as its own bytes: the ledger's key is the same as ingest makes.
    const transfers = ['t-1', 't-2', 't-3', 'lone \ud800', 't-5'];
    const ids = transfers.map((t, i) => Number(insert.run(t === 'lone \ud800' ? Buffer.from('lone \xed\xa0\x80', 'latin1') : t, i === 4 ? 1 : 0).lastInsertRowid));
    db.close();

    const store = new SqliteStore({ dataDir, durability: 'normal' });
    try {
      const key = (transferId: string) => ({ source: 'checkout', event: 'transfer:succeeded', transferId });
      // Nothing to walk: a kept event answers for its own key.
      expect(await store.backfillSeenKeys(2)).toBe(0);
      for (const [i, transferId] of transfers.slice(0, 4).entries()) expect(await store.findSeenKey(key(transferId))).toMatchObject({ eventId: ids[i], seenAt: 1000 });
      // Edited copies have keys of their own (t-5 is copy 1, not a received event).
      expect(await store.findSeenKey(key('t-5'))).toBeNull();
      while ((await store.pruneOldestEvents(10)) > 0);
      expect(await store.saveEvent({ ...key('lone \ud800'), checkoutId: null, email: null, walletAddress: null, validation: 'valid', receivedAt: 2000, headers: {}, body: Buffer.from('{}') }))
        .toEqual({ id: ids[3], duplicate: true, receivedCount: null });
    } finally {
      await store.close();
    }
  });

  it('counts a repeat of an event stored before the ledger on that event, and numbers the next event after it', async () => {
    const dataDir = makeTempDir();
    const db = openDatabase({ dataDir, durability: 'normal' });
    migrate(db, listMigrations().filter((m) => m.version < 17));
    const old = Number(db.prepare(`INSERT INTO events (source, event, transfer_id, validation, received_at, last_received_at, headers, body)
      VALUES ('checkout', 'transfer:succeeded', 't-old', 'valid', 1000, 1000, '{}', '{}')`).run().lastInsertRowid);
    db.close();

    const store = new SqliteStore({ dataDir, durability: 'normal' });
    try {
      const event = (transferId: string) => ({ source: 'checkout', event: 'transfer:succeeded', transferId, checkoutId: null, email: null, walletAddress: null, validation: 'valid' as const, receivedAt: 2000, headers: {}, body: Buffer.from('{}') });
      const [repeat, fresh, again] = await Promise.all([store.saveEvent(event('t-old')), store.saveEvent(event('t-new')), store.saveEvent(event('t-new'))]);
      expect(repeat).toEqual({ id: old, duplicate: true, receivedCount: 2 });
      expect(await store.findSeenKey({ source: 'checkout', event: 'transfer:succeeded', transferId: 't-old' })).toMatchObject({ eventId: old, seenAt: 1000 });
      expect(fresh).toEqual({ id: old + 1, duplicate: false, receivedCount: 1 });
      expect(again).toEqual({ id: old + 1, duplicate: true, receivedCount: 2 });
      expect(await store.findSeenKey({ source: 'checkout', event: 'transfer:succeeded', transferId: 't-new' })).toMatchObject({ eventId: old + 1, seenAt: 2000 });
    } finally {
      await store.close();
    }
  });
});

describe('SQLite migration 018: an event id is never given twice', () => {
  const event = (transferId: string, receivedAt = Date.now()) => ({
    source: 'checkout', event: 'transfer:succeeded', transferId, checkoutId: null, email: null, walletAddress: null, validation: 'valid' as const, receivedAt, headers: {}, body: Buffer.from('{}'),
  });

  it('gives ids above the newest removed event, to received, imported and edited events alike', async () => {
    const store = new SqliteStore({ dataDir: makeTempDir(), durability: 'normal' });
    try {
      const first = await store.saveEvent(event('t-1'));
      const newest = await store.saveEvent(event('t-2'));
      while ((await store.pruneOldestEvents(10)) > 0);
      const next = await store.saveEvent(event('t-3'));
      expect(next.id).toBe(newest.id + 1);
      await store.pruneOldestEvents(10);
      await store.importEvents([{ ...event('t-4'), lastReceivedAt: 1, receivedCount: 1 }]);
      const [imported] = (await store.listEvents({ transferId: 't-4' }, { limit: 1 })).items;
      expect(imported!.id).toBe(next.id + 1);
      const copy = await store.saveEditedCopy({ ...event('t-4'), editedFrom: imported!.id, editedAt: Date.now(), via: 'api' });
      expect(copy).toBe(imported!.id + 1);
      // A repeat of the first removed event is still answered with its own id.
      expect(await store.saveEvent(event('t-1'))).toEqual({ id: first.id, duplicate: true, receivedCount: null });
    } finally {
      await store.close();
    }
  });

  it('upgrades with the floor at the newest id the ledger names, when retention had removed the newest events', async () => {
    const dataDir = makeTempDir();
    const db = openDatabase({ dataDir, durability: 'normal' });
    migrate(db, listMigrations().filter((m) => m.version < 18));
    db.prepare('INSERT INTO seen_keys (key, event_id, seen_at) VALUES (?, 41, 1000)').run(Buffer.alloc(16, 7));
    db.close();
    const store = new SqliteStore({ dataDir, durability: 'normal' });
    try {
      expect((await store.saveEvent(event('t-after'))).id).toBe(42);
    } finally {
      await store.close();
    }
  });
});
