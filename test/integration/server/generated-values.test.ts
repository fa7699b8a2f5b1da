import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { saveGeneratedValue, type GeneratedValue } from '../../../src/identity/generated-values.js';
import { createLogger } from '../../../src/log.js';
import { SqliteStore } from '../../../src/store/sqlite/sqlite-store.js';
import { makeTempDir, removeTempDirs } from '../../helpers/temp-dir.js';

afterAll(() => removeTempDirs());

const stores: SqliteStore[] = [];
afterEach(async () => {
  for (const store of stores.splice(0)) await store.close();
});

let counter = 0;
const value: GeneratedValue = { setting: 'source_secret/checkout', file: 'checkout.secret', configuredBy: 'HOOKRELAY_SECRET', create: () => `fresh-${++counter}` };

function setUp(fileCopies: boolean) {
  const dataDir = makeTempDir();
  const store = new SqliteStore({ dataDir, durability: 'normal' });
  stores.push(store);
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger('info', { write: (line: string) => lines.push(JSON.parse(line)) });
  return { dataDir, store, lines, keeping: { store, dataDir, fileCopies, logger } };
}

describe('generated values kept in the store', () => {
  it('are generated once and read back after; with file copies the data dir gets a 0600 copy', async () => {
    const { dataDir, store, keeping } = setUp(true);
    const first = await saveGeneratedValue(keeping, value);
    expect(first).toEqual({ value: expect.stringMatching(/^fresh-/), generated: true, file: join(dataDir, 'checkout.secret') });
    expect(await store.getSetting('source_secret/checkout')).toBe(first.value);
    expect(readFileSync(first.file!, 'utf8')).toBe(`${first.value}\n`);
    expect(statSync(first.file!).mode & 0o777).toBe(0o600);
    expect(await saveGeneratedValue(keeping, value)).toEqual({ ...first, generated: false });
  });

  it('write no file without file copies (PostgreSQL), yet take a file left in the data dir as the value', async () => {
    const { dataDir, store, keeping } = setUp(false);
    const kept = await saveGeneratedValue(keeping, { ...value, setting: 'admin_token', file: 'admin.token' });
    expect(kept.file).toBeNull();
    expect(() => statSync(join(dataDir, 'admin.token'))).toThrow();
    writeFileSync(join(dataDir, 'checkout.secret'), 'from-an-older-version\n');
    expect(await saveGeneratedValue(keeping, value)).toEqual({ value: 'from-an-older-version', generated: false, file: null });
    expect(await store.getSetting('source_secret/checkout')).toBe('from-an-older-version');
  });

  it('use the database value when a file differs, and say so without either value', async () => {
    const { dataDir, store, lines, keeping } = setUp(true);
    await store.claimSetting('source_secret/checkout', 'kept-value');
    writeFileSync(join(dataDir, 'checkout.secret'), 'edited-file-value\n');
    expect((await saveGeneratedValue(keeping, value)).value).toBe('kept-value');
    const warning = lines.find((line) => line.level === 40)!;
    expect(warning.msg).toContain('differs from the value kept in the database');
    expect(warning.msg).toContain('HOOKRELAY_SECRET');
    expect(JSON.stringify(lines)).not.toMatch(/kept-value|edited-file-value/);
    expect(readFileSync(join(dataDir, 'checkout.secret'), 'utf8')).toBe('edited-file-value\n'); // the operator's file is left alone
  });

  it('refuse an empty file, naming it', async () => {
    const { dataDir, keeping } = setUp(true);
    writeFileSync(join(dataDir, 'checkout.secret'), '\n');
    await expect(saveGeneratedValue(keeping, value)).rejects.toMatchObject({ code: 'invalid_config', message: expect.stringContaining(join(dataDir, 'checkout.secret')) });
  });
});
