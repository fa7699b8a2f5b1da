import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { listMigrations, migrate } from '../../../src/store/postgres/migrate.js';
import { PostgresStore } from '../../../src/store/postgres/postgres-store.js';
import type { NewEvent } from '../../../src/store/event-store.js';
import { createTestDatabase, describeWithPostgres, TEST_POOL, type TestDatabase } from '../../helpers/postgres.js';

let database: TestDatabase;

const BODY = Buffer.from('{"event":"transfer:succeeded","result":{"id":"tr-1"}}');

function received(receivedAt: number): NewEvent {
  return {
    source: 'checkout', event: 'transfer:succeeded', transferId: 'tr-1', checkoutId: null, email: null, walletAddress: null,
    validation: 'valid', receivedAt, headers: {}, body: BODY,
  };
}

describeWithPostgres('PostgreSQL migration 002 (rule sets, edited copies)', () => {
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(() => database.drop());

  it('keeps the events and deliveries stored at 001; a repeat is still a duplicate, a copy takes edit 1', async () => {
    const url = await database.freshSchemaUrl();
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      expect(await migrate(client, listMigrations().filter((m) => m.version <= 1))).toEqual([1]);
      await client.query(`INSERT INTO events (id, source, event, transfer_id, validation, received_at, last_received_at, headers, body)
        VALUES (7, 'checkout', 'transfer:succeeded', 'tr-1', 'valid', 1000, 1000, '{}', $1)`, [BODY]);
      await client.query(`INSERT INTO deliveries (event_id, rule_id, rule_set_hash, state, content_type, created_at, updated_at)
        VALUES (7, 'fwd', 'old', 'dead', 'application/json', 1000, 1000)`);
    } finally {
      await client.end();
    }

    const store = await PostgresStore.open({ url, ...TEST_POOL });
    try {
      expect(await store.getEvent(7)).toMatchObject({ transferId: 'tr-1', ruleSetHash: null, edit: null });
      expect((await store.listDeliveries({ eventId: 7 }, { limit: 10 })).items.map((d) => d.ruleSetHash)).toEqual(['old']);
      expect(await store.saveEvent(received(2_000))).toEqual({ id: 7, duplicate: true, receivedCount: 2 });
      const { receivedAt: _receivedAt, ...copy } = received(0);
      const copyId = await store.saveEditedCopy({ ...copy, editedFrom: 7, editedAt: 3_000, via: 'api', validation: 'invalid' });
      expect(await store.getEvent(copyId)).toMatchObject({ validation: 'invalid', edit: { editedFrom: 7, number: 1 } });
    } finally {
      await store.close();
    }
  });
});
