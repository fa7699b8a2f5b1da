import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import Database, { chooseSqliteDriver, sqliteDriverName, sqliteDriverPath } from '../../src/sqlite-driver.js';
import { makeTempDir, removeTempDirs } from '../helpers/temp-dir.js';

afterAll(() => removeTempDirs());

describe('chooseSqliteDriver', () => {
  it('takes the Node-API build where the runtime has Node-API 10 (Node 22.14 and later, 24)', () => {
    expect(chooseSqliteDriver('10')).toBe('better-sqlite3-napi');
    expect(chooseSqliteDriver('11')).toBe('better-sqlite3-napi');
  });

  it('keeps better-sqlite3 12 where Node-API 10 is missing (Node 20, Node 22 before 22.14)', () => {
    expect(chooseSqliteDriver('9')).toBe('better-sqlite3');
    expect(chooseSqliteDriver('8')).toBe('better-sqlite3');
  });

  it('keeps better-sqlite3 12 when the runtime does not say', () => {
    expect(chooseSqliteDriver(undefined)).toBe('better-sqlite3');
    expect(chooseSqliteDriver('')).toBe('better-sqlite3');
    expect(chooseSqliteDriver('ten')).toBe('better-sqlite3');
  });
});

describe(`the driver loaded on Node ${process.version}`, () => {
  it('is the one chosen for this runtime, loaded from its own package', () => {
    expect(sqliteDriverName).toBe(chooseSqliteDriver(process.versions.napi));
    expect(sqliteDriverPath).toContain(join('node_modules', sqliteDriverName, 'lib'));
  });

  it('writes and reads back a file database through prepared statements and a transaction', () => {
    const file = join(makeTempDir(), 'driver.db');
    const db = new Database(file);
    try {
      db.pragma('journal_mode = WAL');
      db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, body BLOB NOT NULL)');
      const insert = db.prepare<[Buffer]>('INSERT INTO t (body) VALUES (?)');
      db.transaction((bodies: Buffer[]) => bodies.forEach((b) => insert.run(b)))([Buffer.from('a'), Buffer.from('bc')]);
      const rows = db.prepare<[], { id: number; body: Buffer }>('SELECT id, body FROM t ORDER BY id').all();
      expect(rows.map((r) => [r.id, r.body.toString()])).toEqual([[1, 'a'], [2, 'bc']]);
    } finally {
      db.close();
    }
  });
});

describe('loading better-sqlite3', () => {
  const root = fileURLToPath(new URL('../..', import.meta.url));
  const sources = (dir: string): string[] =>
    readdirSync(join(root, dir), { recursive: true, encoding: 'utf8' })
      .filter((name) => /\.(ts|mts|js|mjs|cjs)$/.test(name))
      .map((name) => join(dir, name));

  it('happens only in src/sqlite-driver.ts, so no code runs a driver the runtime cannot use', () => {
    const direct = ['src', 'test', 'bench', 'scripts']
      .flatMap(sources)
      .filter((file) => /(from\s+|require\(|import\()\s*['"]better-sqlite3(-napi)?['"]/.test(readFileSync(join(root, file), 'utf8')));
    expect(direct).toEqual([join('src', 'sqlite-driver.ts')]);
  });
});
