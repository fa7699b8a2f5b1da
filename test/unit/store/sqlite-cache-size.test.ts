import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config.js';
import { createLogger } from '../../../src/log.js';
import { openStore } from '../../../src/store/open-store.js';
import { SqliteStore } from '../../../src/store/sqlite/sqlite-store.js';
import { makeTempDir, removeTempDirs } from '../../helpers/temp-dir.js';

afterAll(() => removeTempDirs());

/** The connection's page cache limit in KiB (SQLite reports a limit set in KiB as a negative number). */
const cacheKib = (store: SqliteStore) => -(store.db.pragma('cache_size', { simple: true }) as number);

function configWith(dataDir: string, yaml: string) {
  const file = join(dataDir, 'hookrelay.yaml');
  writeFileSync(file, yaml);
  return loadConfig({ HOOKRELAY_CONFIG: file, HOOKRELAY_DATA_DIR: dataDir });
}

describe('the SQLite page cache of each connection', () => {
  it('holds at most 2 MiB by default, not the 16 MiB better-sqlite3 is built with', async () => {
    const dataDir = makeTempDir();
    const store = (await openStore(loadConfig({ HOOKRELAY_DATA_DIR: dataDir }), createLogger('silent'))) as SqliteStore;
    try {
      expect(cacheKib(store)).toBe(2048);
    } finally {
      await store.close();
    }
  });

  it('takes database.sqliteCacheSize, for the receiver and the delivery thread alike', async () => {
    const dataDir = makeTempDir();
    const config = configWith(dataDir, 'database:\n  sqliteCacheSize: 8mb\n');
    expect(config.database.sqliteCacheSize).toBe(8 * 1024 * 1024);
    const store = (await openStore(config, createLogger('silent'))) as SqliteStore;
    const attached = (await openStore(config, createLogger('silent'), { attached: true })) as SqliteStore;
    try {
      expect(cacheKib(store)).toBe(8192);
      expect(cacheKib(attached)).toBe(8192);
    } finally {
      await attached.close();
      await store.close();
    }
  });

  it.each(['16kb', '2gb', '0'])('refuses %s with the range it takes', (size) => {
    const dataDir = makeTempDir();
    expect(() => configWith(dataDir, `database:\n  sqliteCacheSize: ${size}\n`)).toThrow(/database\.sqliteCacheSize: expected a (size from 64kb to 1gb|positive size)/);
  });
});
