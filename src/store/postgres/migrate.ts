import type pg from 'pg';
import { HookrelayError } from '../../errors.js';
import { readMigrations, refuseNewerSchema, type Migration } from '../migration-files.js';

const MIGRATIONS_DIR = new URL('./migrations/', import.meta.url);
/** Advisory lock key of migrations ("hookrelay" in ASCII, truncated): every node waits on the same one. */
const MIGRATION_LOCK = 0x686f6f6b72656c;

/** The numbered, append-only SQL files shipped with this build, in order. */
export function listMigrations(): Migration[] {
  return readMigrations(MIGRATIONS_DIR);
}

/**
 * Applies every migration newer than the database, each in its own transaction, and records it. Nodes that
 * start at once take turns on a transaction-level advisory lock: the first applies, the others find the
 * migrations recorded. A database written by a newer hookrelay is refused, naming both versions: migrations
 * are written expand-then-contract, so the version before and the version after a change share a database
 * during a rolling upgrade, and only a schema this build knows nothing about stops it.
 */
export async function migrate(client: pg.ClientBase, migrations: Migration[] = listMigrations()): Promise<number[]> {
  const ran: number[] = [];
  await client.query('BEGIN');
  try {
    await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`);
    const { rows } = await client.query<{ version: number }>('SELECT version FROM schema_migrations');
    const applied = new Set(rows.map((r) => r.version));
    refuseNewerSchema(applied, migrations, 'another database');
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {});
    throw err;
  }
  for (const migration of migrations) {
    await client.query('BEGIN');
    try {
      await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
      // Another node may have applied it while this one waited for the lock.
      const done = await client.query('SELECT 1 FROM schema_migrations WHERE version = $1', [migration.version]);
      if (done.rowCount === 0) {
        await client.query(migration.sql);
        await client.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [migration.version, migration.name]);
        ran.push(migration.version);
      }
      await client.query('COMMIT');
    } catch (err) {
      await client.query('ROLLBACK').catch(() => {});
      // A migration that needs the other nodes stopped says so (object_in_use): not a passing outage to wait out.
      if ((err as { code?: string }).code === '55006') throw new HookrelayError('invalid_config', (err as Error).message, { migration: migration.version });
      throw err;
    }
  }
  return ran;
}
