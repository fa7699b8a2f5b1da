import type { BetterSqlite3 } from '../../sqlite-driver.js';

const LONE_SURROGATE = /[\ud800-\udfff]/u;

/**
 * A string for a key column (event name, transfer id), bound so that SQLite stores the same bytes under
 * either driver (see src/sqlite-driver.ts). JSON allows a lone surrogate ("\ud800"): better-sqlite3 12
 * writes it as its own three bytes (WTF-8), 13 as U+FFFD, which would make "\ud800" and "\ufffd" one
 * transfer id. A string holding one is bound as its WTF-8 bytes instead, and the SQL reads the parameter
 * as CAST(? AS TEXT): text of exactly those bytes. Any other string binds as itself.
 */
export function keyText(value: string): string | Buffer {
  if (!LONE_SURROGATE.test(value)) return value;
  const bytes: number[] = [];
  for (const char of value) {
    const code = char.codePointAt(0)!;
    if (code >= 0xd800 && code <= 0xdfff) bytes.push(0xe0 | (code >> 12), 0x80 | ((code >> 6) & 0x3f), 0x80 | (code & 0x3f));
    else bytes.push(...Buffer.from(char, 'utf8'));
  }
  return Buffer.from(bytes);
}

/** The key columns: bound with `keyText` and read in SQL as CAST(? AS TEXT). */
const KEY_COLUMNS = new Set(['event', 'transfer_id']);

/** The placeholder for a comparison with `column`. */
export const keyParam = (column: string): string => (KEY_COLUMNS.has(column) ? 'CAST(? AS TEXT)' : '?');

/** The value to bind for a comparison with `column`. */
export const keyValue = (column: string, value: string): string | Buffer => (KEY_COLUMNS.has(column) ? keyText(value) : value);

/**
 * The string whose `keyText` bytes these are: UTF-8, where a three-byte form of a surrogate (ED A0-BF xx)
 * is that lone surrogate. The driver reads such text with U+FFFD in place of each of those bytes.
 */
export function fromKeyBytes(bytes: Buffer): string {
  let text = '';
  for (let i = 0; i < bytes.length; ) {
    const b = bytes[i]!;
    const width = b < 0x80 ? 1 : b < 0xe0 ? 2 : b < 0xf0 ? 3 : 4;
    if (width === 3 && b === 0xed && bytes[i + 1]! >= 0xa0) {
      text += String.fromCharCode(((b & 0x0f) << 12) | ((bytes[i + 1]! & 0x3f) << 6) | (bytes[i + 2]! & 0x3f));
    } else text += bytes.subarray(i, i + width).toString('utf8');
    i += width;
  }
  return text;
}

interface KeyColumns {
  id: number;
  event?: string;
  transfer_id?: string;
}

/**
 * Rows of `events` with their key columns as stored: a value read with U+FFFD in it may hold lone
 * surrogates, so it is read again as bytes (rare: only such values pay for a second read).
 */
export function withExactKeys<R extends KeyColumns>(db: BetterSqlite3.Database, rows: R[]): R[] {
  for (const row of rows) {
    if (!row.transfer_id?.includes('\ufffd') && !row.event?.includes('\ufffd')) continue;
    const bytes = db.prepare<[number], { event: Buffer; transfer_id: Buffer }>('SELECT CAST(event AS BLOB) AS event, CAST(transfer_id AS BLOB) AS transfer_id FROM events WHERE id = ?').get(row.id);
    if (!bytes) continue;
    if (row.event !== undefined) row.event = fromKeyBytes(bytes.event);
    if (row.transfer_id !== undefined) row.transfer_id = fromKeyBytes(bytes.transfer_id);
  }
  return rows;
}
