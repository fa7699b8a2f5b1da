import { afterAll, describe, expect, it } from 'vitest';
import { listMigrations, migrate } from '../../../src/store/sqlite/migrate.js';
import { openDatabase, SqliteStore } from '../../../src/store/sqlite/sqlite-store.js';
import { makeTempDir, removeTempDirs } from '../../helpers/temp-dir.js';

afterAll(removeTempDirs);

describe('SQLite migration 017: the ledger of seen keys', () => {
  it('upgrades a database with events in it: each keeps its id, and a backfill puts every key in the ledger, a batch at a time', async () => {
    const dataDir = makeTempDir();
    const db = openDatabase({ dataDir, durability: 'normal' });
    migrate(db, listMigrations().filter((m) => m.version < 17));
    const insert = db.prepare(`INSERT INTO events (source, event, transfer_id, validation, received_at, last_received_at, headers, body, edit_number)
      VALUES ('checkout', 'transfer:succeeded', ?, 'valid', 1000, 1000, '{}', '{}', ?)`);
    // A lone surrogate is stored as its own bytes: the ledger's key is the same as ingest makes.
    const transfers = ['t-1', 't-2', 't-3', 'lone \ud800', 't-5'];
    const ids = transfers.map((t, i) => Number(insert.run(t === 'lone \ud800' ? Buffer.from('lone \xed\xa0\x80', 'latin1') : t, i === 4 ? 1 : 0).lastInsertRowid));
    db.close();

    const store = new SqliteStore({ dataDir, durability: 'normal' });
    try {
      const key = (transferId: string) => ({ source: 'checkout', event: 'transfer:succeeded', transferId });
      expect(await store.findSeenKey(key('t-1'))).toBeNull();
      const batches: number[] = [];
      for (let n = await store.backfillSeenKeys(2); n > 0; n = await store.backfillSeenKeys(2)) batches.push(n);

      expect(batches).toEqual([2, 2, 1]);
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

  it('counts a repeat of an event stored before the ledger on that event, leaves its key out until retention, and numbers the next event after it', async () => {
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
      expect(await store.findSeenKey({ source: 'checkout', event: 'transfer:succeeded', transferId: 't-old' })).toBeNull();
      expect(fresh).toEqual({ id: old + 1, duplicate: false, receivedCount: 1 });
      expect(again).toEqual({ id: old + 1, duplicate: true, receivedCount: 2 });
      expect(await store.findSeenKey({ source: 'checkout', event: 'transfer:succeeded', transferId: 't-new' })).toMatchObject({ eventId: old + 1, seenAt: 2000 });
    } finally {
      await store.close();
    }
  });
});
