import pg from 'pg';
import pino from 'pino';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { RetentionPruner } from '../../../src/retention/retention-pruner.js';
import { copyStore } from '../../../src/store/copy-store.js';
import { listMigrations, migrate } from '../../../src/store/postgres/migrate.js';
import { PostgresStore } from '../../../src/store/postgres/postgres-store.js';
import { SqliteStore } from '../../../src/store/sqlite/sqlite-store.js';
import type { CopyableStore, CopyTable } from '../../../src/store/copyable-store.js';
import { attempt, event } from '../../contract/contract-helpers.js';
import { createTestDatabase, describeWithPostgres, TEST_POOL, type TestDatabase } from '../../helpers/postgres.js';
import { makeTempDir, removeTempDirs } from '../../helpers/temp-dir.js';

let database: TestDatabase;

/** How a node of the previous version stored events, deliveries and attempts (identities, foreign keys). */
const OLD_EVENT = `
  INSERT INTO events (source, event, transfer_id, validation, received_at, last_received_at, headers, body)
  VALUES ('checkout', 'transfer:succeeded', $1, 'valid', $2, $2, '{}', convert_to('{"result":{"id":"' || $1 || '"}}', 'UTF8'))
  ON CONFLICT (transfer_id, source, event, edit_number) DO NOTHING RETURNING id`;
const OLD_DELIVERY = `
  INSERT INTO deliveries (event_id, rule_id, rule_set_hash, state, content_type, next_attempt_at, created_at, updated_at, order_key, order_seq)
  VALUES ($1, 'fwd', 'h', $2, 'application/json', CASE WHEN $2 = 'pending' THEN 0 END, 1000, 1000, $3::text, CASE WHEN $3::text IS NULL THEN NULL ELSE nextval('delivery_order_seq') END)
  RETURNING id`;
const OLD_ATTEMPT = `
  INSERT INTO delivery_attempts (delivery_id, attempt, lease_token, started_at, duration_ms, url_origin, status, outcome)
  VALUES ($1, $2, 'lease', 1000, 5, 'http://127.0.0.1:9', $3, $4) RETURNING id`;

const COPIED: CopyTable[] = ['events', 'deliveries', 'attempts', 'seenKeys'];

async function everyRow(store: CopyableStore): Promise<Record<string, unknown[]>> {
  const rows: Record<string, unknown[]> = {};
  for (const table of COPIED) {
    const read = await store.readCopyRows(table, null, 1_000);
    // Due times cross in each store's clock: compare the rest.
    rows[table] = read.map((row) => ({ ...row, nextAttemptAt: undefined }));
  }
  return rows;
}

describeWithPostgres('PostgreSQL migration 013: time partitions', () => {
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(async () => {
    await database.drop();
    removeTempDirs();
  });

  it('is refused while another node is live, then turns the tables into one legacy partition and pending deliveries into the queue: every row and id kept, nothing lost', async () => {
    const url = await database.freshSchemaUrl();
    const old = new pg.Client({ connectionString: url });
    await old.connect();
    const one = async (sql: string, values: unknown[]): Promise<number> => Number((await old.query<{ id: string }>(sql, values)).rows[0]!.id);
    let store: PostgresStore | undefined;
    try {
      await migrate(old, listMigrations().filter((m) => m.version < 13));
      // Five days old: beyond a one-day retention, within the ledger's 90 days.
      const at = Date.now() - 5 * 24 * 60 * 60 * 1000;
      const blocked = await one(OLD_EVENT, ['blocked', at]);
      const done = await one(OLD_EVENT, ['done', at + 1]);
      const bare = await one(OLD_EVENT, ['bare', at + 2]);
      const pending = await one(OLD_DELIVERY, [blocked, 'pending', 'key-1']);
      const delivered = await one(OLD_DELIVERY, [done, 'delivered', null]);
      const failedAttempt = await one(OLD_ATTEMPT, [pending, 1, 503, 'pending']);
      await one(OLD_ATTEMPT, [delivered, 1, 200, 'delivered']);
      // A node of the previous version is live: the migration waits for a stop-all, with a message saying so.
      await old.query(`INSERT INTO nodes (id, host, pid, role, version, heartbeat_ms, started_at, last_heartbeat)
        VALUES ('old', 'h', 1, 'all', '0.9', 60000, 0, (extract(epoch FROM clock_timestamp()) * 1000)::bigint)`);
      await expect(PostgresStore.open({ url, ...TEST_POOL })).rejects.toThrow(/needs every node stopped/);
      await old.query("DELETE FROM nodes WHERE id = 'old'");

      store = await PostgresStore.open({ url, ...TEST_POOL });
      // A node of the previous version left running stores nothing (its insert names the key that went): it
      // answers 503, and the sender's webhook is stored by a node of this version.
      await expect(old.query(OLD_EVENT, ['late', Date.now()])).rejects.toThrow(/no unique or exclusion constraint/);
      const before = await everyRow(store);
      expect((before.events as { id: number }[]).map((e) => e.id)).toEqual([blocked, done, bare]);
      expect((before.deliveries as { id: number }[]).map((d) => d.id)).toEqual([pending, delivered]);
      // The pending delivery is in the claimable queue, the settled one in the history's legacy partition.
      expect((await old.query('SELECT id FROM pending_deliveries')).rows.map((r) => Number(r.id))).toEqual([pending]);
      expect((await old.query('SELECT id FROM delivery_history_legacy')).rows.map((r) => Number(r.id))).toEqual([delivered]);
      // Lookups by transfer id keep an index (the unique key's went with the key), on every partition.
      const byTransfer = await old.query<{ name: string }>(
        "SELECT indexname AS name FROM pg_indexes WHERE tablename IN ('events', 'events_legacy') AND indexdef LIKE '%(transfer_id, source, event, edit_number)' ORDER BY 1");
      expect(byTransfer.rows.map((r) => r.name)).toEqual(['events_legacy_transfer_id_source_event_edit_number_idx', 'events_transfer']);
      // Repeats of the events stored before are duplicates; new rows get ids after the old ones.
      expect(await store.saveEvent(event('done', { receivedAt: Date.now() }))).toMatchObject({ id: done, duplicate: true });
      const fresh = await store.saveEvent(event('fresh', { receivedAt: Date.now(), deliveries: [{ ruleId: 'fwd', ruleSetHash: 'h', body: null, contentType: 'application/json', orderKey: 'key-1' }] }));
      expect(fresh.id).toBe(bare + 1);
      // The pending delivery goes on where it was: the head of its ordered key, then the new one behind it.
      const [claimed] = await store.claimDueDeliveries({ limit: 5, leaseMs: 60_000 });
      expect(claimed).toMatchObject({ id: pending, eventId: blocked });

      // Retention: old rows not pending are deleted in batches, the pending one moves out of the legacy
      // partition with its delivery and attempt, and the legacy partition, once empty, is dropped.
      const pruner = new RetentionPruner({
        store, logger: pino({ level: 'silent' }), settings: { maxAgeDays: 1, maxEvents: 1_000, intervalMs: 60_000, batchSize: 10 }, pauseBetweenBatchesMs: 0,
      });
      expect(await pruner.runOnce()).toMatchObject({ byAge: 2, interrupted: false });
      await pruner.runOnce();
      const partitions = await old.query<{ name: string }>("SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = 'events'::regclass");
      expect(partitions.rows.map((r) => r.name)).not.toContain('events_legacy');
      expect(await store.recordAttempt(claimed!.id, claimed!.leaseToken, attempt(2, 'delivered'), { state: 'delivered' })).toBe(true);
      const detail = await store.getDelivery(pending);
      expect(detail).toMatchObject({ id: pending, eventId: blocked, state: 'delivered' });
      expect(detail!.attemptLog.map((a) => a.id)).toEqual([failedAttempt, expect.any(Number)]);
      expect(await store.saveEvent(event('done', { receivedAt: Date.now() }))).toEqual({ id: done, duplicate: true, receivedCount: null });

      // `store copy` both ways: to SQLite and back to a new PostgreSQL database, every row and id the same.
      const options = { batchSize: 2, shouldStop: () => false, onProgress: () => {}, now: () => Date.now() };
      const sqlite = new SqliteStore({ dataDir: makeTempDir(), durability: 'normal' });
      const back = await PostgresStore.open({ url: await database.freshSchemaUrl(), ...TEST_POOL });
      try {
        expect((await copyStore(store, sqlite, options)).complete).toBe(true);
        expect((await copyStore(sqlite, back, options)).complete).toBe(true);
        const source = await everyRow(store);
        expect(await everyRow(sqlite)).toEqual(source);
        expect(await everyRow(back)).toEqual(source);
        expect(await back.saveEvent(event('done', { receivedAt: Date.now() }))).toEqual({ id: done, duplicate: true, receivedCount: null });
      } finally {
        await sqlite.close();
        await back.close();
      }
    } finally {
      await store?.close();
      await old.end();
    }
  });
});
