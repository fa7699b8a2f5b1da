import { join } from 'node:path';
import Database, { type BetterSqlite3 } from '../../sqlite-driver.js';
import { HookrelayError } from '../../errors.js';
import type { EventSearch } from '../event-store.js';
import type { NewEventRead, NewEventReader, NewEvents, StreamPosition, StreamStart } from '../new-event-store.js';
import { listMigrations } from './migrate.js';
import { NewEventQueries } from './new-events.js';
import { DATABASE_FILE } from './sqlite-store.js';

/**
 * Newly stored events read from a data dir through a read-only connection, beside a server that may be
 * writing to it. In WAL mode a reader never blocks the writer, and this one writes nothing: no migrations,
 * no checkpoints (the server's own thread does those). Each read is one short statement, so the WAL can
 * start over between two reads.
 */
export class SqliteEventReader implements NewEventReader {
  private readonly queries: NewEventQueries;

  private constructor(private readonly db: BetterSqlite3.Database) {
    this.queries = new NewEventQueries(db);
  }

  static open(dataDir: string): SqliteEventReader {
    let db: BetterSqlite3.Database;
    try {
      db = new Database(join(dataDir, DATABASE_FILE), { readonly: true, fileMustExist: true, timeout: 5_000 });
    } catch (err) {
      throw new HookrelayError('not_found', `No hookrelay database in ${dataDir} (${(err as Error).message}). Pass --data-dir <dir>, or --url to use a running server's admin API.`);
    }
    const known = listMigrations().at(-1)?.version ?? 0;
    let version = 0;
    try {
      version = db.prepare<[], { v: number | null }>('SELECT max(version) AS v FROM schema_migrations').get()!.v ?? 0;
    } catch {
      // no migrations table: not a hookrelay database yet
    }
    if (version < known) {
      db.close();
      throw new HookrelayError('invalid_config', `The database in ${dataDir} has schema version ${version}, older than this hookrelay's (${known}): start \`hookrelay serve\` on it once to upgrade it.`);
    }
    return new SqliteEventReader(db);
  }

  async streamPosition(start: StreamStart): Promise<StreamPosition> {
    return this.queries.streamPosition(start);
  }

  async readNewEvents<B extends boolean>(filter: EventSearch, after: StreamPosition, limit: number, withBodies: B): Promise<NewEvents<NewEventRead<B>>> {
    return this.queries.read(filter, after, limit, withBodies);
  }

  close(): void {
    this.db.close();
  }
}
