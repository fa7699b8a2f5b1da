import type { BetterSqlite3 } from '../../sqlite-driver.js';
import { readMigrations, refuseNewerSchema, type Migration } from '../migration-files.js';

const MIGRATIONS_DIR = new URL('./migrations/', import.meta.url);

export type { Migration };

/** The numbered, append-only SQL files shipped with this build, in order. */
export function listMigrations(): Migration[] {
  return readMigrations(MIGRATIONS_DIR);
}

/**
 * Applies every migration newer than the database, each in its own transaction, and records it.
 * Refuses to run against a database written by a newer hookrelay (its schema is unknown to this code).
 */
export function migrate(db: BetterSqlite3.Database, migrations: Migration[] = listMigrations()): number[] {
  db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)`);
  const applied = new Set(
    (db.prepare('SELECT version FROM schema_migrations').all() as { version: number }[]).map((r) => r.version),
  );
  refuseNewerSchema(applied, migrations, 'another data dir');
  const record = db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)');
  const ran: number[] = [];
  // A migration that rebuilds a table drops the old one: with foreign keys on, that would delete the rows
  // that reference it (ON DELETE CASCADE). They are off while migrations run (the pragma has no effect
  // inside a transaction), and each migration checks them itself before it commits.
  const foreignKeys = db.pragma('foreign_keys', { simple: true }) as number;
  db.pragma('foreign_keys = OFF');
  try {
    for (const migration of migrations) {
      if (applied.has(migration.version)) continue;
      db.transaction(() => {
        db.exec(migration.sql);
        const broken = db.pragma('foreign_key_check') as unknown[];
        if (broken.length > 0) throw new Error(`migration ${migration.version} leaves ${broken.length} broken foreign key reference(s)`);
        record.run(migration.version, migration.name, new Date().toISOString());
      }).immediate();
      ran.push(migration.version);
    }
  } finally {
    db.pragma(`foreign_keys = ${foreignKeys ? 'ON' : 'OFF'}`);
  }
  return ran;
}
