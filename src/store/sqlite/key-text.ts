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
