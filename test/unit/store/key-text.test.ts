import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import Database, { sqliteDriverName } from '../../../src/sqlite-driver.js';
import { keyText } from '../../../src/store/sqlite/key-text.js';
import { makeTempDir, removeTempDirs } from '../../helpers/temp-dir.js';

afterAll(() => removeTempDirs());

describe('keyText', () => {
  it('binds well-formed strings as they are, surrogate pairs included', () => {
    for (const value of ['', 'tr_123', 'e\u0301', '\ufffd', 'a\u0000b', '\ud83d\ude00']) expect(keyText(value)).toBe(value);
  });

  it('binds a string with a lone surrogate as its WTF-8 bytes', () => {
    expect(keyText('\ud800')).toEqual(Buffer.from([0xed, 0xa0, 0x80]));
    expect(keyText('a\udc00\ud83d\ude00')).toEqual(Buffer.from([0x61, 0xed, 0xb0, 0x80, 0xf0, 0x9f, 0x98, 0x80]));
  });

  it(`keeps distinct keys distinct in SQLite through ${sqliteDriverName}, with the bytes better-sqlite3 12 wrote`, () => {
    const db = new Database(join(makeTempDir(), 'keys.db'));
    try {
      db.exec('CREATE TABLE k (key TEXT NOT NULL UNIQUE)');
      const insert = db.prepare<[string | Buffer]>('INSERT INTO k VALUES (CAST(? AS TEXT)) ON CONFLICT (key) DO NOTHING');
      const keys = ['\ud800', '\ufffd', '\udc00', '\ud800\udc00', 'x\ud800', 'x\ud800'];
      const inserted = keys.map((key) => insert.run(keyText(key)).changes);
      expect(inserted).toEqual([1, 1, 1, 1, 1, 0]);
      const stored = db.prepare<[], { hex: string; type: string }>('SELECT hex(key) AS hex, typeof(key) AS type FROM k ORDER BY rowid').all();
      expect(stored).toEqual([
        { hex: 'EDA080', type: 'text' },
        { hex: 'EFBFBD', type: 'text' },
        { hex: 'EDB080', type: 'text' },
        { hex: 'F0908080', type: 'text' },
        { hex: '78EDA080', type: 'text' },
      ]);
    } finally {
      db.close();
    }
  });
});
