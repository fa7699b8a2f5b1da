import { ADMIN_TOKEN_FILE, ADMIN_TOKEN_SETTING, readStoredAdminToken } from '../admin-token.js';
import type { Config } from '../config.js';
import { PostgresStore } from '../store/postgres/postgres-store.js';
import { SqliteStore } from '../store/sqlite/sqlite-store.js';
import { readStoredSourceSecret, sourceSecretFile, sourceSecretSetting } from '../source-secrets.js';
import { hasDatabase } from './local-backend.js';
import type { SettingStore } from '../store/setting-store.js';
import type { StoreLifecycle } from '../store/store-lifecycle.js';

/** A running server holds the write lock only for short commits; wait this long for it. */
const BUSY_TIMEOUT_MS = 5_000;

export interface StoredValue {
  value: string;
  /** Where it was found, for messages (never the value). */
  origin: string;
}

/** The store the settings name (PostgreSQL by URL, else the data dir's SQLite file), or null: a data dir without a database is never created. */
async function openSettingsStore(config: Readonly<Config>): Promise<(SettingStore & StoreLifecycle) | null> {
  const { url, password, ...settings } = config.database;
  if (url !== undefined) return PostgresStore.open({ url, ...(password !== undefined && { password }), ...settings, notifications: false });
  if (!hasDatabase(config.dataDir)) return null;
  return new SqliteStore({ dataDir: config.dataDir, durability: 'normal', busyTimeoutMs: BUSY_TIMEOUT_MS });
}

/**
 * A value `serve` generated: the one kept in the store (every node uses it), else, for a data dir whose
 * server has not started since it kept values only in files, that file.
 */
async function readGenerated(config: Readonly<Config>, setting: string, file: string, readFile: () => string | undefined): Promise<StoredValue | undefined> {
  const store = await openSettingsStore(config);
  if (store) {
    try {
      const value = await store.getSetting(setting);
      if (value !== null) return { value, origin: config.database.url === undefined ? `the database in ${config.dataDir}` : 'the database' };
    } finally {
      await store.close();
    }
  }
  if (config.database.url !== undefined) return undefined;
  const value = readFile();
  return value === undefined ? undefined : { value, origin: `${config.dataDir}/${file}` };
}

/** The signing secret `serve` generated for a source without a configured one. */
export function readGeneratedSourceSecret(config: Readonly<Config>, source: string): Promise<StoredValue | undefined> {
  return readGenerated(config, sourceSecretSetting(source), sourceSecretFile(source), () => readStoredSourceSecret(config.dataDir, source));
}

/** The admin token `serve` generated when HOOKRELAY_ADMIN_TOKEN is unset. */
export function readGeneratedAdminToken(config: Readonly<Config>): Promise<StoredValue | undefined> {
  return readGenerated(config, ADMIN_TOKEN_SETTING, ADMIN_TOKEN_FILE, () => readStoredAdminToken(config.dataDir));
}
