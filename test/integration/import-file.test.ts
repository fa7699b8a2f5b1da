import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ImportFileError, readImport } from '../../src/commands/archive-file.js';
import { EXPORT_FORMAT } from '../../src/operations/export-format.js';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { MAX_RECEIVED_COUNT, type NewEvent } from '../../src/store/event-store.js';
import type { Store } from '../../src/store/store.js';
import { createTestDatabase, describeWithPostgres, TEST_POOL, type TestDatabase } from '../helpers/postgres.js';
import { makeTempDir, removeTempDirs } from '../helpers/temp-dir.js';

afterAll(() => removeTempDirs());

const QUIET = { start: () => {}, update: () => {}, stop: () => {} };
const POLICY = { maxBody: 1024, maxDepth: 64, sources: new Set(['checkout']) };

function line(id: string, overrides: Record<string, unknown> = {}): string {
  return JSON.stringify({
    format: EXPORT_FORMAT, source: 'checkout', event: 'x:imported', transferId: id, validation: 'unrecognised', checkoutId: null, email: null, walletAddress: null,
    receivedAt: '2026-01-01T00:00:00.000Z', lastReceivedAt: '2026-01-01T00:00:00.000Z', receivedCount: 1, headers: { 'x-trace': id },
    bodyBase64: Buffer.from(JSON.stringify({ event: 'x:imported', result: { id } })).toString('base64'), ...overrides,
  });
}

/** The forged line: a credential, a claimed validation, an unconfigured source and the largest count. */
const FORGED = line('forged', { source: 'elsewhere', validation: 'valid', receivedCount: MAX_RECEIVED_COUNT, headers: { authorization: 'Bearer leaked', 'x-trace': 'f' } });

function file(lines: string[]): string {
  const path = join(makeTempDir(), 'events.ndjson');
  writeFileSync(path, `${lines.join('\n')}\n`);
  return path;
}

async function importFile(store: Store, path: string) {
  try {
    return await readImport(path, (events) => store.importEvents(events), POLICY, QUIET, new AbortController().signal);
  } catch (err) {
    if (err instanceof ImportFileError) return { error: err.message, ...err.outcome };
    throw err;
  }
}

function importContract(open: () => Promise<Store>): void {
  it('imports a forged line as untrusted: no credentials, validation from the body, its unconfigured source reported, its count capped on repeats', async () => {
    const store = await open();
    const outcome = await importFile(store, file([line('a'), FORGED, line('b')]));
    expect(outcome).toMatchObject({ imported: 3, duplicates: 0 });
    expect({ ...outcome.unconfiguredSources }).toEqual({ elsewhere: 1 });
    const odd = await importFile(store, file([line('proto', { source: '__proto__' })]));
    expect(Object.entries(odd.unconfiguredSources)).toEqual([['__proto__', 1]]);
    const [forged] = (await store.listEvents({ transferId: 'forged' }, { limit: 1 })).items;
    const stored = (await store.getEvent(forged!.id))!;
    expect(stored).toMatchObject({ source: 'elsewhere', validation: 'unrecognised', receivedCount: MAX_RECEIVED_COUNT });
    expect(stored.headers).toEqual({ 'x-trace': 'f' });
    // The next repeat of that key would overflow PostgreSQL's integer: it stays at the largest one.
    const repeat: NewEvent = { source: 'elsewhere', event: 'x:imported', transferId: 'forged', checkoutId: null, email: null, walletAddress: null, validation: 'unrecognised', receivedAt: Date.now(), headers: {}, body: stored.body };
    expect(await store.saveEvent(repeat)).toEqual({ id: stored.id, duplicate: true, receivedCount: MAX_RECEIVED_COUNT });
  });

  it('stops at a bad line with its number, keeping the lines before it; a rerun after the fix skips them as duplicates', async () => {
    const store = await open();
    const bad = await importFile(store, file([line('a'), line('b'), line('c', { receivedCount: 0 }), line('d')]));
    expect(bad).toMatchObject({ imported: 2, error: expect.stringMatching(/events\.ndjson: line 3: receivedCount: Too small/) });
    const fixed = await importFile(store, file([line('a'), line('b'), line('c'), line('d')]));
    expect(fixed).toMatchObject({ imported: 2, duplicates: 2 });
    expect(await store.countEvents({})).toBe(4);
  });

  it('ends a line longer than maxBody allows in a clean error, reading no more of it than that', async () => {
    const store = await open();
    const huge = line('huge', { pad: 'x'.repeat(8 * 1024 * 1024) });
    const outcome = await importFile(store, file([line('a'), huge, line('b')]));
    expect(outcome).toMatchObject({ imported: 1, error: expect.stringMatching(/line 2: the line is longer than \d+ bytes/) });
  });
}

describe('events import (SQLite)', () => {
  const opened: Store[] = [];
  afterEach(async () => {
    for (const store of opened.splice(0)) await store.close();
  });
  importContract(async () => {
    const store = new SqliteStore({ dataDir: makeTempDir(), durability: 'normal' });
    opened.push(store);
    return store;
  });
});

describeWithPostgres('events import (PostgreSQL)', () => {
  let database: TestDatabase;
  const opened: Store[] = [];
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(async () => {
    for (const store of opened) await store.close();
    await database.drop();
  });
  importContract(async () => {
    const store = await PostgresStore.open({ url: await database.freshSchemaUrl(), ...TEST_POOL, notifications: false });
    opened.push(store);
    return store;
  });
});
