import type { Logger } from 'pino';
import type { Config } from '../config.js';
import { SqliteStore } from './sqlite/sqlite-store.js';
import type { Store } from './store.js';

/** The default `commitIntervalMs` on PostgreSQL; SQLite's is 0. */
const POSTGRES_COMMIT_INTERVAL_MS = 2;

/**
 * PostgreSQL when `database.url` is set (several nodes share it), the embedded SQLite file in dataDir otherwise.
 * `attached`: a second store of this process on the same database (the delivery thread's), see SqliteStore.
 */
export async function openStore(config: Readonly<Config>, logger: Logger, options: { attached?: boolean } = {}): Promise<Store> {
  const { url, password, sqliteCacheSize, ...settings } = config.database;
  if (url === undefined) return new SqliteStore({ dataDir: config.dataDir, durability: config.durability, commitIntervalMs: config.commitIntervalMs ?? 0, attached: options.attached, cacheBytes: sqliteCacheSize });
  // Loaded only here: a SQLite receiver never pays for the PostgreSQL client.
  const [{ PostgresStore }, { redactUrl }] = await Promise.all([import('./postgres/postgres-store.js'), import('./postgres/connection.js')]);
  const commitIntervalMs = config.commitIntervalMs ?? POSTGRES_COMMIT_INTERVAL_MS;
  const store = await PostgresStore.open({ url, ...(password !== undefined && { password }), ...settings, commitIntervalMs, partitionDays: config.retention.partitionDays });
  if (!options.attached) logger.info({ database: redactUrl(url), poolSize: settings.poolSize, notifications: settings.notifications }, 'store: PostgreSQL');
  return store;
}
