import { existsSync } from 'node:fs';
import type { Config } from '../config.js';
import { createLogger } from '../log.js';
import { openStore } from '../store/open-store.js';
import type { Store } from '../store/store.js';
import { storeIdentityOf } from '../runtime/store-identity.js';

/** Whether the configuration's SQLite data dir holds a database (PostgreSQL always "has" one). */
export function hasDatabase(config: Pick<Config, 'dataDir' | 'database'>): boolean {
  const identity = storeIdentityOf(config);
  return identity.kind === 'postgres' || existsSync(identity.location);
}

/**
 * The store `serve` would open from the same configuration (PostgreSQL by URL, else the data dir's SQLite
 * file), for a command run without a server. A SQLite data dir without a database is never created unless
 * `create`: then null. Commits here do not wait for an fsync (the command is no receiver acknowledging).
 */
export async function openCommandStore(config: Readonly<Config>, options: { create?: boolean } = {}): Promise<Store | null> {
  if (!options.create && !hasDatabase(config)) return null;
  const settings: Readonly<Config> = { ...config, durability: 'normal', database: { ...config.database, notifications: false } };
  return openStore(settings, createLogger('silent'));
}
