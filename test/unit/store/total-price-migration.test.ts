import { afterAll, describe, expect, it } from 'vitest';
import { listMigrations, migrate } from '../../../src/store/sqlite/migrate.js';
import { openDatabase, SqliteStore } from '../../../src/store/sqlite/sqlite-store.js';
import type { NewEvent } from '../../../src/store/event-store.js';
import { AMOUNT_BODIES } from '../../helpers/amount-bodies.js';
import { makeTempDir, removeTempDirs } from '../../helpers/temp-dir.js';

afterAll(removeTempDirs);

describe('SQLite migration 014: the amount (result.totalPriceUsd) beside the raw bytes', () => {
  it('upgrades a database of migration 013 with events in it: each stored body gives its amount, or none', async () => {
    const dataDir = makeTempDir();
    const db = openDatabase({ dataDir, durability: 'normal' });
    migrate(db, listMigrations().filter((m) => m.version <= 13));
    const insert = db.prepare(`INSERT INTO events (source, event, transfer_id, validation, received_at, last_received_at, headers, body)
      VALUES ('checkout', 'transfer:succeeded', ?, 'valid', 1000, 1000, '{}', ?)`);
    const ids = AMOUNT_BODIES.map((b) => Number(insert.run(b.transferId, b.body).lastInsertRowid));
    db.close();

    const store = new SqliteStore({ dataDir, durability: 'normal' });
    try {
      const listed = new Map((await store.listEvents({}, { limit: 50 })).items.map((e) => [e.id, e.totalPriceUsd]));
      expect(ids.map((id) => listed.get(id))).toEqual(AMOUNT_BODIES.map((b) => b.amount));
      expect((await store.getEvent(ids[0]!))!.totalPriceUsd).toBe(AMOUNT_BODIES[0]!.amount);
    } finally {
      await store.close();
    }
  });

  it('keeps a row inserted without the column (a node of the previous version) readable, with no amount', async () => {
    const dataDir = makeTempDir();
    const store = new SqliteStore({ dataDir, durability: 'normal' });
    await store.close();
    const db = openDatabase({ dataDir, durability: 'normal' });
    const id = Number(db.prepare(`INSERT INTO events (source, event, transfer_id, validation, received_at, last_received_at, headers, body)
      VALUES ('checkout', 'transfer:succeeded', 'old-node', 'valid', 1000, 1000, '{}', ?)`).run(AMOUNT_BODIES[0]!.body).lastInsertRowid);
    db.close();
    const reopened = new SqliteStore({ dataDir, durability: 'normal' });
    try {
      expect((await reopened.listEvents({}, { limit: 5 })).items.find((e) => e.id === id)).toMatchObject({ transferId: 'old-node', totalPriceUsd: null });
      const saved = await reopened.saveEvent(newEvent('new-node', 12.5));
      expect((await reopened.getEvent(saved.id))!.totalPriceUsd).toBe(12.5);
    } finally {
      await reopened.close();
    }
  });
});

function newEvent(transferId: string, totalPriceUsd: number): NewEvent {
  return {
    source: 'checkout', event: 'transfer:succeeded', transferId, checkoutId: null, email: null, walletAddress: null, totalPriceUsd,
    validation: 'valid', receivedAt: 2_000, headers: {}, body: Buffer.from(`{"event":"transfer:succeeded","result":{"id":"${transferId}","totalPriceUsd":${totalPriceUsd}}}`),
  };
}
