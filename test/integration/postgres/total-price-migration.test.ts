import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { listMigrations, migrate } from '../../../src/store/postgres/migrate.js';
import { PostgresStore } from '../../../src/store/postgres/postgres-store.js';
import type { NewEvent } from '../../../src/store/event-store.js';
import { AMOUNT_BODIES } from '../../helpers/amount-bodies.js';
import { createTestDatabase, describeWithPostgres, TEST_POOL, type TestDatabase } from '../../helpers/postgres.js';

let database: TestDatabase;

function received(transferId: string, totalPriceUsd: number): NewEvent {
  return {
    source: 'checkout', event: 'transfer:succeeded', transferId, checkoutId: null, email: null, walletAddress: null, totalPriceUsd,
    validation: 'valid', receivedAt: 2_000, headers: {}, body: Buffer.from(`{"event":"transfer:succeeded","result":{"id":"${transferId}","totalPriceUsd":${totalPriceUsd}}}`),
  };
}

describeWithPostgres('PostgreSQL migration 008: the amount (result.totalPriceUsd) beside the raw bytes', () => {
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(() => database.drop());

  it('upgrades a database of migration 007 with events in it: each stored body gives its amount, or none', async () => {
    const url = await database.freshSchemaUrl();
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    const ids: number[] = [];
    try {
      expect(await migrate(client, listMigrations().filter((m) => m.version <= 7))).toEqual([1, 2, 3, 4, 5, 6, 7]);
      for (const b of AMOUNT_BODIES) {
        const { rows } = await client.query<{ id: number }>(`INSERT INTO events (source, event, transfer_id, validation, received_at, last_received_at, headers, body)
          VALUES ('checkout', 'transfer:succeeded', $1, 'valid', 1000, 1000, '{}', $2) RETURNING id`, [b.transferId, b.body]);
        ids.push(Number(rows[0]!.id));
      }
    } finally {
      await client.end();
    }

    const store = await PostgresStore.open({ url, ...TEST_POOL });
    try {
      const listed = new Map((await store.listEvents({}, { limit: 50 })).items.map((e) => [e.id, e.totalPriceUsd]));
      expect(ids.map((id) => listed.get(id))).toEqual(AMOUNT_BODIES.map((b) => (b.postgresAmount === undefined ? b.amount : b.postgresAmount)));
      expect((await store.getEvent(ids[0]!))!.totalPriceUsd).toBe(AMOUNT_BODIES[0]!.amount);
      // The function that read the bodies lived only for the migration.
      expect(await database.query(`SELECT 1 FROM pg_proc WHERE proname = 'body_total_price_usd'`)).toEqual([]);
    } finally {
      await store.close();
    }
  });

  it('keeps a row inserted without the column (a node of the previous version) readable, with no amount', async () => {
    const url = await database.freshSchemaUrl();
    const store = await PostgresStore.open({ url, ...TEST_POOL });
    try {
      // The previous version's insert, on a connection of its own with the same settings (schema) as the node's.
      const oldNode = new pg.Client({ connectionString: url });
      await oldNode.connect();
      const [row] = await oldNode
        .query<{ id: string }>(`INSERT INTO events (source, event, transfer_id, validation, received_at, last_received_at, headers, body)
          VALUES ('checkout', 'transfer:succeeded', 'old-node', 'valid', 1000, 1000, '{}', $1) RETURNING id`, [AMOUNT_BODIES[0]!.body])
        .then((result) => result.rows)
        .finally(() => oldNode.end());
      expect(await store.getEvent(Number(row!.id))).toMatchObject({ transferId: 'old-node', totalPriceUsd: null });
      const saved = await store.saveEvent(received('new-node', 12.5));
      expect((await store.listEvents({ transferId: 'new-node' }, { limit: 5 })).items.map((e) => [e.id, e.totalPriceUsd])).toEqual([[saved.id, 12.5]]);
    } finally {
      await store.close();
    }
  });
});
