import { join } from 'node:path';
import type { Config } from '../config.js';

/** The database file of a SQLite data dir (the store's own constant, repeated here so front ends need not load the driver). */
const SQLITE_FILE = 'hookrelay.db';

/** Which store a configuration names, without credentials: two configurations name the same store when these are equal. */
export interface StoreIdentity {
  kind: 'sqlite' | 'postgres';
  /** SQLite: the database file's absolute path. PostgreSQL: host:port/database, and the search_path when the URL sets one. */
  location: string;
}

/** The search_path a libpq `options` parameter sets (`-c search_path=x`), if any: two schemas of one database are two stores. */
function searchPathOf(url: URL): string | undefined {
  const options = url.searchParams.get('options');
  return options?.match(/search_path=([^\s]+)/)?.[1];
}

export function storeIdentityOf(config: Pick<Config, 'dataDir' | 'database'>): StoreIdentity {
  const url = config.database.url;
  if (url === undefined) return { kind: 'sqlite', location: join(config.dataDir, SQLITE_FILE) };
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { kind: 'postgres', location: 'an unparsable database URL' };
  }
  const host = parsed.hostname || 'localhost';
  const database = decodeURIComponent(parsed.pathname.replace(/^\//, '')) || '(default database)';
  const schema = searchPathOf(parsed);
  return { kind: 'postgres', location: `${host}:${parsed.port || '5432'}/${database}${schema ? ` (search_path ${schema})` : ''}` };
}

export function sameStore(a: StoreIdentity, b: StoreIdentity): boolean {
  return a.kind === b.kind && a.location === b.location;
}

/** For messages: "the SQLite database /srv/data/hookrelay.db", "PostgreSQL at db:5432/hookrelay". */
export function describeStore(identity: StoreIdentity): string {
  return identity.kind === 'sqlite' ? `the SQLite database ${identity.location}` : `PostgreSQL at ${identity.location}`;
}
