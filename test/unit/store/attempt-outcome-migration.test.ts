import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { listMigrations, migrate } from '../../../src/store/sqlite/migrate.js';
import { DATABASE_FILE, SqliteStore } from '../../../src/store/sqlite/sqlite-store.js';
import { makeTempDir, removeTempDirs } from '../../helpers/temp-dir.js';

afterAll(removeTempDirs);

/** A data dir whose database stopped at migration 007, with one delivery and three recorded attempts. */
function dataDirAtVersion7(): string {
  const dataDir = makeTempDir();
  const db = new Database(join(dataDir, DATABASE_FILE));
  migrate(db, listMigrations().filter((m) => m.version <= 7));
  db.prepare(`INSERT INTO events (id, source, event, transfer_id, validation, received_at, last_received_at, headers, body)
    VALUES (1, 'checkout', 'transfer:succeeded', 'tr_1', 'valid', 1000, 1000, '{}', X'7b7d')`).run();
  db.prepare(`INSERT INTO deliveries (id, event_id, rule_id, rule_set_hash, state, content_type, attempts, created_at, updated_at)
    VALUES (5, 1, 'fulfil', 'abc', 'delivered', 'application/json', 3, 1000, 4000)`).run();
  const attempt = db.prepare(`INSERT INTO delivery_attempts (id, delivery_id, attempt, started_at, duration_ms, url_origin, status, outcome)
    VALUES (?, 5, ?, ?, 10, 'https://example.com', ?, ?)`);
  attempt.run(11, 1, 1000, 503, 'retry');
  attempt.run(12, 2, 2000, 500, 'retry');
  attempt.run(13, 3, 3000, 200, 'delivered');
  db.close();
  return dataDir;
}

describe('migration 009: an attempt\'s outcome is the state it left its delivery in', () => {
  it('rewrites recorded `retry` outcomes as `pending`, keeping every attempt and its id', async () => {
    const store = new SqliteStore({ dataDir: dataDirAtVersion7(), durability: 'normal' });
    try {
      const delivery = await store.getDelivery(5);
      expect(delivery!.attemptLog.map((a) => [a.id, a.attempt, a.status, a.outcome])).toEqual([
        [11, 1, 503, 'pending'],
        [12, 2, 500, 'pending'],
        [13, 3, 200, 'delivered'],
      ]);
    } finally {
      await store.close();
    }
  });

  it('refuses the old value afterwards, and still deletes attempts with their delivery', () => {
    const dataDir = dataDirAtVersion7();
    const db = new Database(join(dataDir, DATABASE_FILE));
    try {
      db.pragma('foreign_keys = ON');
      migrate(db);
      const insert = db.prepare(`INSERT INTO delivery_attempts (delivery_id, attempt, started_at, duration_ms, url_origin, outcome) VALUES (5, 4, 5000, 1, 'x', ?)`);
      expect(() => insert.run('retry')).toThrow(/CHECK constraint failed/);
      insert.run('pending');
      db.prepare('DELETE FROM deliveries WHERE id = 5').run();
      expect(db.prepare('SELECT COUNT(*) AS n FROM delivery_attempts').get()).toEqual({ n: 0 });
    } finally {
      db.close();
    }
  });
});
