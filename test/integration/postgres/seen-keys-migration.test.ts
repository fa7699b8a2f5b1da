import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { listMigrations, migrate } from '../../../src/store/postgres/migrate.js';
import { PostgresStore } from '../../../src/store/postgres/postgres-store.js';
import { seenKey, seenKeyText } from '../../../src/store/seen-key.js';
import { eventText } from '../../../src/store/storable-text.js';
import type { NewEvent } from '../../../src/store/event-store.js';
import { createTestDatabase, describeWithPostgres, TEST_POOL, type TestDatabase } from '../../helpers/postgres.js';

let database: TestDatabase;

function received(transferId: string): NewEvent {
  return {
    source: 'checkout', event: 'transfer:succeeded', transferId, checkoutId: null, email: null, walletAddress: null,
    validation: 'valid', receivedAt: 2_000, headers: {}, body: Buffer.from(`{"event":"transfer:succeeded","result":{"id":"${transferId}"}}`),
  };
}

/** How a node of the previous version stores an event: the events' unique key decides, nothing else. */
const OLD_NODE_INSERT = `
  INSERT INTO events AS e (source, event, transfer_id, validation, received_at, last_received_at, headers, body)
  VALUES ('checkout', 'transfer:succeeded', $1, 'valid', 1000, 1000, '{}', '\\x7b7d')
  ON CONFLICT (transfer_id, source, event, edit_number) DO UPDATE SET received_count = e.received_count + 1
  RETURNING id`;

describeWithPostgres('PostgreSQL migration 012: the ledger of seen keys', () => {
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(() => database.drop());

  it('upgrades a database with events in it, beside a node of the previous version, and keeps every key a duplicate', async () => {
    const url = await database.freshSchemaUrl();
    const old = new pg.Client({ connectionString: url });
    await old.connect();
    try {
      await migrate(old, listMigrations().filter((m) => m.version < 12));
      const before = Number((await old.query<{ id: string }>(OLD_NODE_INSERT, ['before'])).rows[0]!.id);
      const beforeLater = Number((await old.query<{ id: string }>(OLD_NODE_INSERT, ['before-later'])).rows[0]!.id);

      // Migration 012 with a node of the previous version running: the trigger records the keys it stores.
      await migrate(old, listMigrations().filter((m) => m.version <= 12));
      const during = Number((await old.query<{ id: string }>(OLD_NODE_INSERT, ['during'])).rows[0]!.id);

      const store = await PostgresStore.open({ url, ...TEST_POOL });
      try {
        // Stored before the ledger: still a duplicate (found in the legacy partition), every id kept.
        expect(await store.saveEvent(received('before'))).toEqual({ id: before, duplicate: true, receivedCount: 2 });
        expect(await store.findSeenKey({ ...received('before') })).toBeNull();
        expect(await store.findSeenKey({ ...received('during') })).toMatchObject({ eventId: during });

        // Retention's passes put the keys of the events stored before the ledger in it, a batch at a time.
        expect([await store.backfillSeenKeys(1), await store.backfillSeenKeys(1), await store.backfillSeenKeys(1)]).toEqual([1, 1, 0]);
        expect(await store.findSeenKey({ ...received('before') })).toMatchObject({ eventId: before, seenAt: 1000 });
        expect(await store.findSeenKey({ ...received('before-later') })).toMatchObject({ eventId: beforeLater });

        while ((await store.pruneOldestEvents(10)) > 0);

        expect(await store.saveEvent(received('before'))).toEqual({ id: before, duplicate: true, receivedCount: null });
        expect(await store.saveEvent(received('during'))).toEqual({ id: during, duplicate: true, receivedCount: null });
        // After migration 013 (partitions) the previous version cannot insert at all: its ON CONFLICT names a
        // unique key that is gone (a stop-all upgrade, docs/operations.md), so nothing is stored twice.
        await expect(old.query(OLD_NODE_INSERT, ['before'])).rejects.toMatchObject({ code: '42P10' });
        expect(await store.countEvents({})).toBe(0);
      } finally {
        await store.close();
      }
    } finally {
      await old.end();
    }
  });

  it('computes in SQL the key the code computes, for every text a key may hold', async () => {
    const url = await database.freshSchemaUrl();
    const store = await PostgresStore.open({ url, ...TEST_POOL });
    await store.close();
    const schema = new URL(url).searchParams.get('options')!.split('=')[1]!;
    const odd = ['t', '', 'ü €', 'nul\u0000', 'lone \ud800', '\u0001escaped', '😀'.repeat(40)];
    for (const transferId of odd) {
      const [row] = await database.query<{ key: string }>(`SELECT ${schema}.hookrelay_seen_key($1, $2, $3, 7)::text AS key`, [
        eventText('checkout'), eventText('a:b'), eventText(transferId),
      ]);
      expect(row!.key).toBe(seenKeyText(seenKey('checkout', 'a:b', transferId, 7)));
    }
  });
});
