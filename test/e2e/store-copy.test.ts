import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { sampleTransferSucceeded } from '../../src/samples/transfer-succeeded.js';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { copyKeyOf } from '../../src/store/copy-store.js';
import { COPY_TABLES, type CopyRows, type CopyTable } from '../../src/store/copyable-store.js';
import type { Store } from '../../src/store/store.js';
import { runCli, startServeProcess, type CliProcess } from '../helpers/cli-process.js';
import { postSigned, send } from '../helpers/http.js';
import { createTestDatabase, describeWithPostgres, TEST_POOL, type TestDatabase } from '../helpers/postgres.js';
import { eventually, rulesDirWith } from '../helpers/rules.js';
import { makeTempDir, removeTempDirs } from '../helpers/temp-dir.js';
import { startWebhookSink } from '../helpers/webhook-sink.js';

const SECRET = 'copy-secret';
const TOKEN = 'copy-admin-token-0123456789abcdef';
const auth = { authorization: `Bearer ${TOKEN}` };
let database: TestDatabase;
afterAll(() => removeTempDirs());

async function admin(url: string, path: string, init: { method?: string; body?: unknown } = {}): Promise<any> {
  const reply = await send(`${url}/admin/api${path}`, {
    method: init.method,
    headers: { ...auth, ...(init.body !== undefined && { 'content-type': 'application/json' }) },
    ...(init.body !== undefined && { body: JSON.stringify(init.body) }),
  });
  expect(reply.status, `${path}: ${reply.text}`).toBeLessThan(300);
  return reply.json;
}

/** Every event of a server, newest first, each with its deliveries and their attempts, as its admin API shows them. */
async function everyEvent(url: string): Promise<any[]> {
  const { items } = await admin(url, '/events?limit=100');
  return Promise.all(items.map((item: { id: number }) => admin(url, `/events/${item.id}`)));
}

async function copyCli(args: string[], env: Record<string, string> = {}): Promise<CliProcess & { result: { code: number | null; signal: NodeJS.Signals | null } }> {
  const proc = runCli(['store', 'copy', ...args], { env });
  return { ...proc, result: await proc.exited };
}

/** Every row of every table as a copy reads it. */
async function readAll(store: Store): Promise<Record<CopyTable, unknown[]>> {
  const all = {} as Record<CopyTable, unknown[]>;
  for (const table of COPY_TABLES) {
    const rows: CopyRows[CopyTable][] = [];
    for (;;) {
      const last = rows.at(-1);
      const page = await store.readCopyRows(table, last === undefined ? null : copyKeyOf(last), 500);
      if (page.length === 0) break;
      rows.push(...page);
    }
    all[table] = rows;
  }
  return all;
}

describeWithPostgres('hookrelay store copy', () => {
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(() => database.drop());

  it('moves a served SQLite data dir to PostgreSQL: same events, bytes, delivery ids, attempts and dead letters; new ids above them', { timeout: 180_000 }, async () => {
    const dead = new Set<string>();
    let failOnce: string | null = null;
    const sink = await startWebhookSink((_i, request) => {
      const id = JSON.parse(request.rawBody.toString()).result.id as string;
      if (id === failOnce) {
        failOnce = null;
        return 503;
      }
      return dead.has(id) ? 410 : 200;
    });
    const configFile = join(makeTempDir(), 'hookrelay.yaml');
    writeFileSync(configFile, 'delivery:\n  allowNetworks: [127.0.0.1/32]\n  pollIntervalMs: 50\n');
    const base = {
      HOOKRELAY_CONFIG: configFile,
      HOOKRELAY_RULES_DIR: rulesDirWith({ 'sink.yaml': `id: sink\non: [transfer:succeeded]\nto:\n  url: ${sink.url}\nretry: { schedule: [0s, 1s] }\n` }),
      HOOKRELAY_SECRET: SECRET,
      HOOKRELAY_ADMIN_TOKEN: TOKEN,
    };
    const dataDir = makeTempDir();
    try {
      const sqliteNode = await startServeProcess({ ...base, HOOKRELAY_DATA_DIR: dataDir });
      const bodies = Array.from({ length: 6 }, (_, i) => Buffer.from(`${JSON.stringify(sampleTransferSucceeded(), null, i)} \n`));
      const transferIds = bodies.map((b) => JSON.parse(b.toString()).result.id as string);
      dead.add(transferIds[1]!).add(transferIds[4]!);
      failOnce = transferIds[2]!;
      for (const body of bodies) expect((await postSigned(`${sqliteNode.url}/webhooks/checkout`, body, SECRET)).status).toBe(200);
      expect((await postSigned(`${sqliteNode.url}/webhooks/checkout`, bodies[0]!, SECRET)).json).toMatchObject({ duplicate: true, receivedCount: 2 });
      const { items: [newest] } = await admin(sqliteNode.url, '/events?limit=1');
      const edited = JSON.stringify({ ...JSON.parse(bodies[3]!.toString()), note: 'edited' });
      await admin(sqliteNode.url, `/events/${newest.id - 2}/edited-replay`, { method: 'POST', body: { body: edited, meantInvalid: true } });
      await eventually(async () => {
        const { items } = await admin(sqliteNode.url, '/deliveries?limit=100');
        return items.length === 7 && items.every((d: { state: string }) => d.state !== 'pending');
      }, 20_000, 'every delivery settled');
      const before = await everyEvent(sqliteNode.url);
      sqliteNode.child.kill('SIGTERM');
      expect((await sqliteNode.exited).code).toBe(0);
      expect(before).toHaveLength(7);
      expect(before.flatMap((e) => e.deliveries.map((d: { state: string }) => d.state)).sort()).toEqual(['dead', 'dead', 'delivered', 'delivered', 'delivered', 'delivered', 'delivered']);
      expect(before.flatMap((e) => e.deliveries).find((d: { attempts: number }) => d.attempts === 2)).toBeDefined();
      const sentBefore = sink.received.length;

      const url = await database.freshSchemaUrl();
      const copy = await copyCli(['--from', dataDir, '--to', url, '--json']);
      expect(copy.result.code, copy.stderr()).toBe(0);
      const summary = JSON.parse(copy.stdout());
      expect(summary).toMatchObject({ complete: true, sourceChanged: false, tables: { events: { source: 7, added: 7 }, deliveries: { source: 7, added: 7 }, jobs: { source: 0 } } });
      expect(summary.tables.attempts.added).toBe(sentBefore);

      const pgNode = await startServeProcess({ ...base, HOOKRELAY_DATA_DIR: makeTempDir(), HOOKRELAY_DATABASE_URL: url });
      try {
        expect(await everyEvent(pgNode.url)).toEqual(before);
        for (const [i, body] of bodies.entries()) {
          const event = before.find((e) => e.event.transferId === transferIds[i] && e.event.edit === null)!;
          expect(Buffer.compare(Buffer.from(event.event.bodyBase64, 'base64'), body)).toBe(0);
        }
        const fresh = await postSigned(`${pgNode.url}/webhooks/checkout`, sampleTransferSucceeded(), SECRET);
        expect(fresh.status).toBe(200);
        expect(fresh.json.id).toBeGreaterThan(Math.max(...before.map((e) => e.event.id)));
        const [sent] = (await sink.waitFor(sentBefore + 1)).slice(sentBefore);
        const freshDelivery = (await admin(pgNode.url, `/events/${fresh.json.id}`)).deliveries[0];
        expect(freshDelivery.id).toBeGreaterThan(Math.max(...before.flatMap((e) => e.deliveries.map((d: { id: number }) => d.id))));
        expect(sent!.headers['x-hookrelay-delivery']).toBe(`dlv_${freshDelivery.id}`);
        // Nothing copied was sent again: every copied delivery had settled.
        await eventually(async () => (await admin(pgNode.url, `/events/${fresh.json.id}`)).deliveries[0].state === 'delivered');
        expect(sink.received.length).toBe(sentBefore + 1);
      } finally {
        pgNode.child.kill('SIGTERM');
        await pgNode.exited;
      }
    } finally {
      await sink.close();
    }
  });

  it('carries on after Ctrl-C and after kill -9, ends with every row once under its own id, and copies back', { timeout: 180_000 }, async () => {
    const dataDir = makeTempDir();
    const source = new SqliteStore({ dataDir, durability: 'normal' });
    const now = Date.now();
    for (let i = 0; i < 300; i += 1) {
      await source.saveEvent({
        source: 'checkout', event: 'transfer:succeeded', transferId: `t-${i}`, checkoutId: null, email: null, walletAddress: null, validation: 'valid',
        receivedAt: now - 10_000 + i, headers: {}, body: Buffer.from(`{"n":${i}}`), deliveries: [{ ruleId: 'a', ruleSetHash: 'h', body: null, contentType: 'application/json' }],
      });
    }
    for (const claimed of await source.claimDueDeliveries({ limit: 200, leaseMs: 60_000 })) {
      await source.recordAttempt(claimed.id, claimed.leaseToken,
        { attempt: 1, startedAt: now, durationMs: 1, urlOrigin: 'http://127.0.0.1:9', status: 200, errorCode: null, errorMessage: null, responseExcerpt: null, outcome: 'delivered' },
        { state: 'delivered' });
    }
    const expected = await readAll(source);
    await source.close();

    const url = await database.freshSchemaUrl();
    const target = await PostgresStore.open({ url, ...TEST_POOL, notifications: false });
    try {
      const slow = { HOOKRELAY_TEST_COPY_PAUSE_MS: '50' };
      // Ctrl-C: stops after the batch it is writing, says how to carry on.
      const first = runCli(['store', 'copy', '--from', dataDir, '--to', url, '--batch-size', '20'], { env: slow });
      await eventually(async () => (await target.copyExtent()).events.rows >= 40, 20_000, 'a few batches copied');
      first.child.kill('SIGINT');
      expect((await first.exited).code).toBe(130);
      expect(first.stdout()).toContain('run the same command again');
      expect(first.stderr()).toMatch(/^store copy: events, \d+\/800 rows$/m); // not a terminal: plain lines, no bar
      const afterInterrupt = (await target.copyExtent()).events.rows;
      expect(afterInterrupt % 20).toBe(0);
      expect(afterInterrupt).toBeLessThan(300);

      // kill -9: whole batches stay, the next run finds where they end.
      const second = runCli(['store', 'copy', '--from', dataDir, '--to', url, '--batch-size', '20'], { env: slow });
      await eventually(async () => (await target.copyExtent()).deliveries.rows >= 20, 30_000, 'deliveries being copied');
      second.child.kill('SIGKILL');
      await second.exited;
      const killed = await target.copyExtent();
      expect(killed.events.rows).toBe(300);
      expect(killed.deliveries.rows).toBeLessThan(300);

      const last = await copyCli(['--from', dataDir, '--to', url, '--json']);
      expect(last.result.code, last.stderr()).toBe(0);
      const summary = JSON.parse(last.stdout());
      expect(summary.complete).toBe(true);
      expect(summary.tables.events.added).toBe(0);
      expect(summary.tables.deliveries.added).toBe(300 - killed.deliveries.rows);
      // Due times cross the database clock, measured by each process to within a few milliseconds.
      const copied = await readAll(target);
      const dueOf = (rows: unknown[]) => (rows as CopyRows['deliveries'][]).map((d) => d.nextAttemptAt);
      const withoutDue = (rows: unknown[]) => (rows as CopyRows['deliveries'][]).map((d) => ({ ...d, nextAttemptAt: d.nextAttemptAt === null }));
      expect({ ...copied, deliveries: withoutDue(copied.deliveries) }).toEqual({ ...expected, deliveries: withoutDue(expected.deliveries) });
      dueOf(copied.deliveries).forEach((due, i) => expect(Math.abs(due! - dueOf(expected.deliveries)[i]!)).toBeLessThanOrEqual(10));

      // And back: PostgreSQL into a new data dir.
      const backDir = join(makeTempDir(), 'data');
      const back = await copyCli(['--from', url, '--to', backDir]);
      expect(back.result.code, back.stderr()).toBe(0);
      const backStore = new SqliteStore({ dataDir: backDir, durability: 'normal' });
      const returned = await readAll(backStore);
      await backStore.close();
      expect({ ...returned, deliveries: withoutDue(returned.deliveries) }).toEqual({ ...expected, deliveries: withoutDue(expected.deliveries) });
      dueOf(returned.deliveries).forEach((due, i) => expect(Math.abs(due! - dueOf(expected.deliveries)[i]!)).toBeLessThanOrEqual(20));
    } finally {
      await target.close();
    }
  });

  it('refuses a target holding another instance\'s data, a newer schema, a bad URL and a missing data dir, each in one clear line', { timeout: 180_000 }, async () => {
    const dataDir = makeTempDir();
    const source = new SqliteStore({ dataDir, durability: 'normal' });
    const event = (transferId: string, receivedAt: number) => ({
      source: 'checkout', event: 'transfer:succeeded', transferId, checkoutId: null, email: null, walletAddress: null, validation: 'valid' as const,
      receivedAt, headers: {}, body: Buffer.from('{}'),
    });
    await source.saveEvent(event('mine', 1_000));
    await source.close();

    const usedUrl = await database.freshSchemaUrl();
    const used = await PostgresStore.open({ url: usedUrl, ...TEST_POOL, notifications: false });
    await used.saveEvent(event('theirs', 2_000));
    await used.close();
    const refused = await copyCli(['--from', dataDir, '--to', usedUrl]);
    expect(refused.result.code).toBe(1);
    expect(refused.stderr()).toMatch(/^hookrelay: The target holds a different event 1 than the source.*Copy into an empty database\.\n$/);

    const newerUrl = await database.freshSchemaUrl();
    const newer = await PostgresStore.open({ url: newerUrl, ...TEST_POOL, notifications: false });
    await newer.close();
    const schema = new URL(newerUrl).searchParams.get('options')!.replace('-c search_path=', '');
    await database.query(`INSERT INTO ${schema}.schema_migrations (version, name) VALUES (999, 'from_the_future')`);
    const tooNew = await copyCli(['--from', dataDir, '--to', newerUrl]);
    expect(tooNew.result.code).toBe(2);
    expect(tooNew.stderr()).toContain('schema version 999, newer than this hookrelay knows');

    const badUrl = await copyCli(['--from', dataDir, '--to', 'postgres://user:secret@[::1']);
    expect(badUrl.result.code).toBe(1);
    expect(badUrl.stderr()).toContain('not a valid PostgreSQL URL');
    expect(badUrl.stderr()).not.toContain('secret');

    const nulDir = makeTempDir();
    const nulSource = new SqliteStore({ dataDir: nulDir, durability: 'normal' });
    // Keys with NUL are copied (escaped on PostgreSQL); an order key with one is not.
    await nulSource.saveEvent({ ...event('nul\u0000here', 1_000), deliveries: [{ ruleId: 'fwd', ruleSetHash: 'h', body: null, contentType: 'application/json', orderKey: 'nul\u0000key' }] });
    await nulSource.close();
    const nul = await copyCli(['--from', nulDir, '--to', await database.freshSchemaUrl()]);
    expect(nul.result.code).toBe(1);
    expect(nul.stderr()).toContain('hookrelay: deliveries 1 to 1: a text field holds a NUL character');

    const missing = await copyCli(['--from', join(dataDir, 'nothing-here'), '--to', usedUrl]);
    expect(missing.result.code).toBe(1);
    expect(missing.stderr()).toContain('no hookrelay database in this directory');
  });
});
