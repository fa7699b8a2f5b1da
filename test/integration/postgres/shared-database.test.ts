import pg from 'pg';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { clientConfig } from '../../../src/store/postgres/connection.js';
import { listMigrations } from '../../../src/store/postgres/migrate.js';
import { PostgresStore } from '../../../src/store/postgres/postgres-store.js';
import type { NewEvent } from '../../../src/store/event-store.js';
import { eventually } from '../../helpers/rules.js';
import { createTestDatabase, describeWithPostgres, TEST_POOL, type TestDatabase } from '../../helpers/postgres.js';

let database: TestDatabase;
const opened: PostgresStore[] = [];
afterEach(async () => {
  for (const store of opened.splice(0)) await store.close();
});

async function node(url: string, settings: Partial<typeof TEST_POOL> = {}): Promise<PostgresStore> {
  const store = await PostgresStore.open({ url, ...TEST_POOL, ...settings });
  opened.push(store);
  return store;
}

function copy(transferId: string, n: number): NewEvent {
  return {
    source: 'checkout', event: 'transfer:succeeded', transferId, checkoutId: null, email: null, walletAddress: null, validation: 'valid',
    receivedAt: Date.now(), headers: { copy: String(n) }, body: Buffer.from(`{"result":{"id":"${transferId}"},"copy":${n}}`),
    deliveries: [{ ruleId: 'fwd', ruleSetHash: 'h', body: null, contentType: 'application/json' }],
  };
}

describeWithPostgres('several nodes on one PostgreSQL database', () => {
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(() => database.drop());

  it('opens every connection with synchronous commits, no JIT and the configured timeouts', async () => {
    const client = new pg.Client(clientConfig({ url: database.url, ...TEST_POOL, statementTimeoutMs: 1_234, lockTimeoutMs: 567 }));
    await client.connect();
    try {
      const show = async (name: string): Promise<unknown> => (await client.query(`SHOW ${name}`)).rows[0]![name];
      expect([await show('synchronous_commit'), await show('jit'), await show('statement_timeout'), await show('lock_timeout')]).toEqual(['on', 'off', '1234ms', '567ms']);
    } finally {
      await client.end();
    }
  });

  it('migrates once when nodes start at the same moment, and each records the same schema', async () => {
    const url = await database.freshSchemaUrl();
    await Promise.all([node(url), node(url), node(url)]);
    const schema = new URL(url).searchParams.get('options')!.split('=')[1]!;
    const versions = await database.query<{ version: number }>(`SELECT version FROM ${schema}.schema_migrations ORDER BY version`);
    expect(versions.map((v) => v.version)).toEqual(listMigrations().map((m) => m.version));
  });

  it('refuses a schema newer than it knows, naming both versions', async () => {
    const url = await database.freshSchemaUrl();
    await (await node(url)).close();
    const schema = new URL(url).searchParams.get('options')!.split('=')[1]!;
    await database.query(`INSERT INTO ${schema}.schema_migrations (version, name) VALUES (999, 'from_the_future')`);
    const known = listMigrations().at(-1)!.version;
    await expect(PostgresStore.open({ url, ...TEST_POOL })).rejects.toMatchObject({
      code: 'invalid_config',
      message: expect.stringContaining(`schema version 999, newer than this hookrelay knows (${known})`),
    });
  });

  it('stores a transfer once when two nodes receive copies at the same instant, and plans its deliveries once', async () => {
    const url = await database.freshSchemaUrl();
    const [a, b] = await Promise.all([node(url), node(url)]);
    const transfers = Array.from({ length: 30 }, (_, i) => `t-${i}`);
    const results = await Promise.all(transfers.flatMap((t) => [a.saveEvent(copy(t, 1)), b.saveEvent(copy(t, 2)), a.saveEvent(copy(t, 3))]));
    for (let i = 0; i < transfers.length; i += 1) {
      const three = results.slice(i * 3, i * 3 + 3);
      expect(three.filter((r) => !r.duplicate), transfers[i]).toHaveLength(1);
      expect(new Set(three.map((r) => r.id)).size).toBe(1);
      expect(three.map((r) => r.receivedCount).sort()).toEqual([1, 2, 3]);
    }
    expect(await b.countEvents({})).toBe(30);
    expect((await a.outboxStats()).pending).toBe(30);
  });

  it('never hands one delivery to two nodes claiming at once', async () => {
    const url = await database.freshSchemaUrl();
    const [a, b] = await Promise.all([node(url), node(url)]);
    for (let i = 0; i < 60; i += 1) await a.saveEvent(copy(`t-${i}`, 1));
    const claimed: number[] = [];
    const drain = async (store: PostgresStore): Promise<void> => {
      for (;;) {
        const batch = await store.claimDueDeliveries({ limit: 7, leaseMs: 60_000 });
        if (batch.length === 0) return;
        claimed.push(...batch.map((d) => d.id));
      }
    };
    await Promise.all([drain(a), drain(b), drain(a), drain(b)]);
    expect(claimed).toHaveLength(60);
    expect(new Set(claimed).size).toBe(60);
  });

  it('wakes another node\'s listeners within moments of a new event, and again after its connection was cut', async () => {
    const url = await database.freshSchemaUrl();
    const [sender, listener] = await Promise.all([node(url), node(url)]);
    const heard: number[] = [];
    listener.onDeliveriesDue(() => heard.push(performance.now()));
    const sentAt = performance.now();
    await sender.saveEvent(copy('t-1', 1));
    await eventually(() => heard.length > 0, 2_000, 'the notification');
    expect(heard[0]! - sentAt).toBeLessThan(1_000); // milliseconds here; the bound only tells it from the poll
    await database.terminateConnections(); // every connection of this database, the listener's too
    // The listener connects again by itself, and looks once in case work fell due meanwhile.
    heard.length = 0;
    await eventually(() => heard.length > 0, 10_000, 'the listener back');
    heard.length = 0;
    await eventually(() => sender.saveEvent(copy('t-2', 1)).then(() => true, () => false), 10_000, 'the sender back');
    await eventually(() => heard.length > 0, 2_000, 'a notification after the reconnection');
  });

  it('refuses an event whose order key holds a NUL character as a bad payload, storing its batch neighbours', async () => {
    const store = await node(await database.freshSchemaUrl());
    const nulKey = { ...copy('nul-key', 1), deliveries: [{ ruleId: 'fwd', ruleSetHash: 'h', body: null, contentType: 'application/json', orderKey: 'a\u0000b' }] };
    const [good, bad] = await Promise.allSettled([store.saveEvent(copy('fine', 1)), store.saveEvent(nulKey)]);
    expect(good).toMatchObject({ status: 'fulfilled', value: { duplicate: false } });
    expect(bad).toMatchObject({ status: 'rejected', reason: { code: 'invalid_payload', status: 422 } });
    expect(await store.countEvents({})).toBe(1);
  });

  it('leaves notifications off when told (a pooler in transaction mode): the poll finds the work', async () => {
    const url = await database.freshSchemaUrl();
    const [sender, listener] = await Promise.all([node(url), node(url, { notifications: false })]);
    let heard = 0;
    listener.onDeliveriesDue(() => {
      heard += 1;
    });
    await sender.saveEvent(copy('t-1', 1));
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(heard).toBe(0);
    expect(await listener.nextDueAt()).not.toBeNull();
  });
});
