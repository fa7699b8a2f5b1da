import pino from 'pino';
import pg from 'pg';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { RetentionPruner } from '../../../src/retention/retention-pruner.js';
import { PostgresStore } from '../../../src/store/postgres/postgres-store.js';
import { DAY_MS, freeDiscarded, listPartitions, PARTITIONS_AHEAD } from '../../../src/store/postgres/partitions.js';
import { eventSelectionSql } from '../../../src/store/postgres/event-filter-sql.js';
import { SqlParams } from '../../../src/store/postgres/sql-params.js';
import { NewEventQueries } from '../../../src/store/postgres/new-events.js';
import { EventQueries } from '../../../src/store/postgres/event-queries.js';
import type { StreamPosition } from '../../../src/store/new-event-store.js';
import { copyStore } from '../../../src/store/copy-store.js';
import { attempt, event, forward } from '../../contract/contract-helpers.js';
import { createTestDatabase, describeWithPostgres, TEST_POOL, type TestDatabase } from '../../helpers/postgres.js';

let database: TestDatabase;

const day = (t: number): string => `p${new Date(Math.floor(t / DAY_MS) * DAY_MS).toISOString().slice(0, 10).replaceAll('-', '')}`;

/**
 * Reads from `position` until `count` events came: a transaction open anywhere on the server (another test's)
 * holds commit-order reads back for a while.
 */
async function readNew(reader: NewEventQueries, position: StreamPosition, count: number, limit: number): Promise<{ ids: number[]; transferIds: string[]; position: StreamPosition }> {
  const read: { id: number; transferId: string }[] = [];
  const deadline = Date.now() + 10_000;
  while (read.length < count && Date.now() < deadline) {
    const page = await reader.read({}, position, limit, false);
    read.push(...page.events);
    position = page.position;
    if (page.events.length === 0) await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return { ids: read.map((e) => e.id), transferIds: read.map((e) => e.transferId), position };
}

/** The statements of one kind (namedByShape) prepared on `pool`'s connection, and how often each was planned. */
async function preparedStatements(pool: pg.Pool, kind: string): Promise<{ statement: string; generic_plans: string; custom_plans: string }[]> {
  return (await pool.query<{ statement: string; generic_plans: string; custom_plans: string }>(
    "SELECT statement, generic_plans, custom_plans FROM pg_prepared_statements WHERE starts_with(name, 'hookrelay_' || $1 || '_')", [kind])).rows;
}

/**
 * The plan of `q` as it ran (EXPLAIN ANALYZE), in a transaction rolled back: nothing it writes stays.
 * `indexesOnly`: sequential scans off, as the planner does on tables too large to read whole.
 */
async function analyzed(pool: pg.Pool, q: { text: string; values: unknown[] }, indexesOnly = false): Promise<string[]> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    if (indexesOnly) await client.query('SET LOCAL enable_seqscan = off');
    return (await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, COSTS OFF) ${q.text}`, q.values)).rows.map((r) => r['QUERY PLAN']);
  } finally {
    await client.query('ROLLBACK');
    client.release();
  }
}

/** `count` events received and written at `writtenAt`, in one statement (transfer ids `prefix`-1...). */
const bulkInsert = (prefix: string, writtenAt: number, count: number): string => `INSERT INTO events (source, event, transfer_id, validation, received_at, last_received_at, headers, body, written_at)
  SELECT 'checkout', 'transfer:succeeded', '${prefix}-' || g, 'valid', ${writtenAt}, ${writtenAt}, '{}', '\\x7b7d', ${writtenAt} FROM generate_series(1, ${count}) g`;

/** `pool`, keeping each query it is sent in `sent`. */
function recording(pool: pg.Pool, sent: { text: string; values: unknown[] }[]): pg.Pool {
  return { query: (q: { text: string; values: unknown[] }) => (sent.push(q), pool.query(q)) } as unknown as pg.Pool;
}

async function open(clock?: { now: () => number }): Promise<{ store: PostgresStore; url: string; schema: string; partitions: () => Promise<string[]>; rows: (table: string) => Promise<number[]> }> {
  const url = await database.freshSchemaUrl();
  const store = await PostgresStore.open({ url, ...TEST_POOL, partitionDays: 1, ...(clock && { clock }) });
  const schema = new URL(url).searchParams.get('options')!.split('=')[1]!;
  return {
    store,
    url,
    schema,
    partitions: async () => (await database.query<{ name: string }>(
      `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = '${schema}.events'::regclass ORDER BY 1`,
    )).map((r) => r.name),
    rows: async (table) => (await database.query<{ id: string }>(`SELECT id FROM ${schema}.${table} ORDER BY id`)).map((r) => Number(r.id)),
  };
}

describeWithPostgres('PostgreSQL time partitions', () => {
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(() => database.drop());

  it('creates the current partition and those ahead at start, and one on demand for an insert outside them', async () => {
    const { store, partitions } = await open();
    try {
      const now = Date.now();
      const ahead = Array.from({ length: PARTITIONS_AHEAD + 1 }, (_, i) => `events_${day(now + i * DAY_MS)}`);
      // A new database's legacy partition is empty: the first retention pass drops it.
      expect(await partitions()).toEqual(['events_legacy', ...ahead]);
      const old = now - 40 * DAY_MS;
      const saved = await store.saveEvent(event('old', { receivedAt: old, deliveries: [forward('fwd')] }));
      expect(await partitions()).toEqual(['events_legacy', `events_${day(old)}`, ...ahead]);
      expect(await store.getEvent(saved.id)).toMatchObject({ transferId: 'old', receivedAt: old });
      expect(await store.saveEvent(event('old', { receivedAt: old + 1 }))).toEqual({ id: saved.id, duplicate: true, receivedCount: 2 });
    } finally {
      await store.close();
    }
  });

  it('starts on a pool of one connection (the partitions are created after the migration gives it back)', async () => {
    const store = await PostgresStore.open({ url: await database.freshSchemaUrl(), ...TEST_POOL, partitionDays: 1, poolSize: 1 });
    try {
      expect(await store.saveEvent(event('one', { receivedAt: Date.now() - 40 * DAY_MS }))).toMatchObject({ duplicate: false });
    } finally {
      await store.close();
    }
  });

  it('drops the partitions older than the age limit, moving pending events with their deliveries and attempts first', async () => {
    const now = Date.now();
    let clockAt = now;
    const { store, partitions, rows, schema } = await open({ now: () => clockAt });
    try {
      const old = now - 10 * DAY_MS;
      const gone = await store.saveEvent(event('gone', { receivedAt: old, deliveries: [forward('fwd', { deadReason: 'rule disabled' })] }));
      const blocked = await store.saveEvent(event('blocked', { receivedAt: old + 1, deliveries: [forward('ordered', { orderKey: 'k' })] }));
      const [claimed] = await store.claimDueDeliveries({ limit: 1, leaseMs: 60_000 });
      expect(claimed).toMatchObject({ eventId: blocked.id });
      await store.recordAttempt(claimed!.id, claimed!.leaseToken, attempt(1, 'pending', 503), { state: 'pending', nextAttemptAt: now + 60_000 });
      const attemptsBefore = await rows('delivery_attempts');
      const recent = await store.saveEvent(event('recent', { receivedAt: now }));

      const report = await store.maintainPartitions({ now, storedBefore: now - 5 * DAY_MS, maxEvents: 1_000 });
      expect(report).toMatchObject({ byAge: 1, byCount: 0, moved: 1, dropped: 2 }); // and the empty legacy partition
      expect(await partitions()).not.toContain(`events_${day(old)}`);
      // Detached and freed: no table of the range is left in the schema.
      expect(await database.query(`SELECT relname FROM pg_class WHERE relnamespace = '${schema}'::regnamespace AND relname LIKE '%${day(old)}%'`)).toEqual([]);
      // The pending event, its delivery and its attempt: all there, every id kept.
      expect(await store.getEvent(blocked.id)).toMatchObject({ transferId: 'blocked', receivedAt: old + 1 });
      expect(await rows('deliveries')).toEqual([claimed!.id]); // the dropped event's dead letter went with it
      expect(await rows('pending_deliveries')).toEqual([claimed!.id]); // in the queue all along
      expect(await rows('delivery_attempts')).toEqual(attemptsBefore);
      expect((await store.getDelivery(claimed!.id))!.attemptLog).toHaveLength(1);
      expect(await store.getEvent(gone.id)).toBeNull();
      expect(await store.getEvent(recent.id)).not.toBeNull();
      // The dropped event's key stays in the ledger: a repeat is a duplicate, not stored again.
      expect(await store.saveEvent(event('gone', { receivedAt: now }))).toEqual({ id: gone.id, duplicate: true, receivedCount: null });
      // The moved delivery is still claimed and settled as before.
      clockAt = now + 61_000;
      const [again] = await store.claimDueDeliveries({ limit: 5, leaseMs: 60_000 });
      expect(again).toMatchObject({ id: claimed!.id, eventId: blocked.id });
      expect(await store.recordAttempt(again!.id, again!.leaseToken, attempt(2, 'delivered'), { state: 'delivered' })).toBe(true);
      expect((await store.getDelivery(claimed!.id))!.attemptLog.map((a) => a.attempt)).toEqual([1, 2]);
    } finally {
      await store.close();
    }
  });

  it('frees discarded partitions one index or table per statement, pausing between, leftovers of any pass included', async () => {
    const { store, url, schema } = await open();
    const pool = new pg.Pool({ connectionString: url, max: 1 });
    try {
      // As an interrupted pass leaves them: detached, renamed, not yet dropped.
      await pool.query('CREATE TABLE discarded_events_p20200101 (id bigint PRIMARY KEY, transfer_id text UNIQUE, received_at bigint)');
      await pool.query('CREATE INDEX discarded_received ON discarded_events_p20200101 (received_at)');
      await pool.query('CREATE TABLE discarded_delivery_attempts_p20200101 (id bigint)');
      const sent: { text: string }[] = [];
      const pauses: number[] = [];
      const recordingPool = { query: (q: string | { text: string }, values?: unknown[]) => (sent.push(typeof q === 'string' ? { text: q } : q), pool.query(q as string, values)) } as unknown as pg.Pool;
      expect(await freeDiscarded(recordingPool, async (ms) => void pauses.push(ms))).toBe(2);
      const steps = sent.slice(1).map((q) => q.text);
      expect(steps).toHaveLength(5);
      expect(steps.slice(0, 3).every((step) => /DROP (CONSTRAINT|INDEX)/.test(step))).toBe(true);
      expect(steps.slice(3)).toEqual(['DROP TABLE IF EXISTS discarded_delivery_attempts_p20200101', 'DROP TABLE IF EXISTS discarded_events_p20200101']);
      expect(pauses).toHaveLength(4);
      expect(pauses.every((ms) => ms >= 50)).toBe(true);
      expect(await database.query(`SELECT relname FROM pg_class WHERE relnamespace = '${schema}'::regnamespace AND relname LIKE 'discarded%'`)).toEqual([]);
      expect(await freeDiscarded(pool)).toBe(0);
    } finally {
      await pool.end();
      await store.close();
    }
  });

  it('a pass frees what an interrupted one left before it drops: a range discarded again finds its names free', async () => {
    const { store, partitions, schema } = await open();
    try {
      const now = Date.now();
      const old = now - 10 * DAY_MS;
      await store.saveEvent(event('old', { receivedAt: old }));
      // The same range, dropped by an earlier pass that stopped before freeing it, then created again by a late insert.
      await database.query(`CREATE TABLE ${schema}.discarded_events_${day(old)} (id bigint PRIMARY KEY)`);
      const report = await store.maintainPartitions({ now, storedBefore: now - 5 * DAY_MS, maxEvents: 1_000 });
      expect(report).toMatchObject({ byAge: 1, interrupted: false });
      expect(await partitions()).not.toContain(`events_${day(old)}`);
      expect(await database.query(`SELECT relname FROM pg_class WHERE relnamespace = '${schema}'::regnamespace AND relname LIKE 'discarded%'`)).toEqual([]);
    } finally {
      await store.close();
    }
  });

  it('retention by count drops whole oldest partitions within the excess and deletes the rest in batches', async () => {
    const { store, partitions } = await open();
    try {
      const now = Date.now();
      const ids: number[] = [];
      for (const [days, n] of [[3, 2], [2, 2], [1, 2]] as const) {
        for (let i = 0; i < n; i += 1) ids.push((await store.saveEvent(event(`d${days}-${i}`, { receivedAt: now - days * DAY_MS + i }))).id);
      }
      const counts = vi.spyOn(store, 'countEvents');
      const pruner = new RetentionPruner({
        store, logger: pino({ level: 'silent' }), settings: { maxAgeDays: 30, maxEvents: 3, intervalMs: 60_000, batchSize: 10 }, pauseBetweenBatchesMs: 0,
      });
      const report = await pruner.runOnce();
      expect(report).toMatchObject({ byAge: 0, byCount: 3, interrupted: false });
      // The partitions left may hold more than 3 (their id spans add up to 4): the remainder is counted exactly.
      expect(counts).toHaveBeenCalledTimes(1);
      expect(await partitions()).not.toContain(`events_${day(now - 3 * DAY_MS)}`);
      expect(await partitions()).toContain(`events_${day(now - 2 * DAY_MS)}`);
      const left = await store.listEvents({}, { limit: 10 });
      expect(left.items.map((e) => e.id)).toEqual(ids.slice(3).reverse());
    } finally {
      await store.close();
    }
  });

  it('a pass whose partitions cannot hold more than maxEvents counts no event', async () => {
    const { store } = await open();
    try {
      const now = Date.now();
      for (const days of [3, 2, 1, 0]) await store.saveEvent(event(`d${days}`, { receivedAt: now - days * DAY_MS }));
      const counts = vi.spyOn(store, 'countEvents');
      const pass = (maxEvents: number) => new RetentionPruner({
        store, logger: pino({ level: 'silent' }), settings: { maxAgeDays: 30, maxEvents, intervalMs: 60_000, batchSize: 10 }, pauseBetweenBatchesMs: 0,
      }).runOnce();
      // Four events, one per partition: the id spans add up to 4, within a limit of 4.
      expect(await pass(4)).toMatchObject({ byAge: 0, byCount: 0, interrupted: false });
      expect(counts).not.toHaveBeenCalled();
      expect(await store.countEvents({})).toBe(4);
      counts.mockClear();
      // Over it, the oldest partition goes whole (no count needed either: the bound left is 3).
      expect(await pass(3)).toMatchObject({ byCount: 1, interrupted: false });
      expect(counts).not.toHaveBeenCalled();
      expect((await store.listEvents({}, { limit: 10 })).items.map((e) => e.transferId)).toEqual(['d0', 'd1', 'd2']);
    } finally {
      await store.close();
    }
  });

  it('once the ledger\'s backfill has ended, a retention pass reads no event for it', async () => {
    const { store, url } = await open();
    const pool = new pg.Pool({ connectionString: url, max: 1 });
    try {
      const now = Date.now();
      // A history large enough for the planner to walk the events by id, had the statement let it.
      for (const days of [2, 1, 0]) {
        await store.saveEvent(event(`d${days}`, { receivedAt: now - days * DAY_MS })); // its partition created
        await pool.query(bulkInsert(`d${days}`, now - days * DAY_MS, 10_000));
      }
      await pool.query('ANALYZE events');
      const sent: { text: string; values: unknown[] }[] = [];
      // A new database's backfill has nothing to walk (and writes nothing, so its plan can be run again).
      expect(await new EventQueries(recording(pool, sent)).backfillSeenKeys(100)).toBe(0);
      const scans = (await analyzed(pool, sent[0]!)).filter((line) => / on events_/.test(line));
      expect(scans.length).toBeGreaterThan(0);
      expect(scans.every((line) => line.includes('(never executed)'))).toBe(true);
    } finally {
      await pool.end();
      await store.close();
    }
  });

  it('retention\'s batched deletes read only the events out of their partition\'s range, never those left to its drop', async () => {
    const { store, url, schema } = await open();
    const pool = new pg.Pool({ connectionString: url, max: 1 });
    try {
      const now = Date.now();
      const inPlace: number[] = [];
      for (let i = 0; i < 3; i += 1) inPlace.push((await store.saveEvent(event(`in-place-${i}`, { receivedAt: now - 2 * DAY_MS + i }))).id);
      // As a drop moves a pending event: received 5 days ago, written now (its delivery since settled).
      const moved = (await store.saveEvent(event('moved', { receivedAt: now - 5 * DAY_MS }))).id;
      await database.query(`UPDATE ${schema}.events SET written_at = $1 WHERE id = $2`, [now, moved]);
      const partitions = await listPartitions(pool);
      // Planned and run as on partitions too large to read whole, rolled back: the statement for each range.
      const plans: string[][] = [];
      const explaining = { query: async (q: { text: string; values: unknown[] }) => (plans.push(await analyzed(pool, q, true)), { rowCount: 0 }) } as unknown as pg.Pool;
      await new EventQueries(explaining).pruneOutOfPlace(now, 10, partitions);
      expect(plans).toHaveLength(partitions.length);
      const lines = plans.flat();
      // The received_at index stops at each range's start: in-place rows are not read and filtered out.
      expect(lines.some((line) => /Rows Removed by Filter: [1-9]/.test(line))).toBe(false);
      const reads = lines.filter((line) => / on events_p\d+ .*\(actual /.test(line));
      expect(reads.length).toBeGreaterThan(0);
      expect(reads.every((line) => / rows=[01] /.test(line))).toBe(true);
      expect(await new EventQueries(pool).pruneOutOfPlace(now, 10, partitions)).toBe(1);
      expect((await store.listEvents({}, { limit: 10 })).items.map((e) => e.id).sort((a, b) => a - b)).toEqual(inPlace);
    } finally {
      await pool.end();
      await store.close();
    }
  });

  it('a search from a time reads only the partitions from it on (and the legacy one)', async () => {
    const { store, schema } = await open();
    try {
      const now = Date.now();
      for (let d = 0; d < 3; d += 1) await store.saveEvent(event(`e${d}`, { receivedAt: now - d * DAY_MS }));
      const from = Math.floor(now / DAY_MS) * DAY_MS;
      const params = new SqlParams();
      const where = eventSelectionSql({ receivedFrom: from, email: 'a@b.c' }, params);
      const plan = await database.query<{ 'QUERY PLAN': string }>(`EXPLAIN SELECT e.id FROM ${schema}.events e WHERE ${where} ORDER BY e.id DESC LIMIT 10`, params.values);
      const text = plan.map((r) => r['QUERY PLAN']).join('\n');
      expect(text).toContain(`events_${day(now)}`);
      expect(text).not.toContain(`events_${day(now - DAY_MS)}`);
      expect((await store.listEvents({ receivedFrom: from - DAY_MS }, { limit: 10 })).items.map((e) => e.transferId)).toEqual(['e0', 'e1']);
    } finally {
      await store.close();
    }
  });

  it('keeps pending deliveries in the queue table and settled ones in the history: a claim never waits for the history', async () => {
    const { store, schema, rows } = await open();
    const other = new pg.Client({ connectionString: database.url });
    await other.connect();
    try {
      const saved = await store.saveEvent(event('split', { deliveries: [forward('a'), forward('b'), forward('off', { deadReason: 'rule disabled' })] }));
      const [a, b, off] = (await store.listDeliveries({ eventId: saved.id }, { limit: 10 })).items.map((d) => d.id).reverse();
      expect(await rows('pending_deliveries')).toEqual([a, b]);
      expect(await rows('delivery_history')).toEqual([off]);
      // The history and the attempts locked whole (as a partition's creation does, for an instant): claims go on.
      await other.query('BEGIN');
      await other.query(`LOCK TABLE ${schema}.delivery_history, ${schema}.delivery_attempts IN ACCESS EXCLUSIVE MODE`);
      const claimed = await store.claimDueDeliveries({ limit: 5, leaseMs: 60_000 });
      expect(claimed.map((c) => c.id)).toEqual([a, b]);
      await other.query('ROLLBACK');
      expect(await store.recordAttempt(a!, claimed[0]!.leaseToken, attempt(1, 'pending', 503), { state: 'pending', nextAttemptAt: Date.now() + 60_000 })).toBe(true);
      // Settled: moved to the history with its attempt; retried: back in the queue, the same id.
      expect(await store.recordAttempt(b!, claimed[1]!.leaseToken, attempt(1, 'delivered'), { state: 'delivered' })).toBe(true);
      expect(await rows('pending_deliveries')).toEqual([a]);
      expect(await rows('delivery_history')).toEqual([b, off]);
      expect(await store.retryDelivery(off!)).toBe(true);
      expect(await rows('pending_deliveries')).toEqual([a, off]);
      expect((await store.getDelivery(b!))!).toMatchObject({ state: 'delivered', attemptLog: [expect.objectContaining({ attempt: 1 })] });
      expect((await store.listDeliveries({ eventId: saved.id }, { limit: 10 })).items.map((d) => [d.id, d.state])).toEqual([[off, 'pending'], [b, 'delivered'], [a, 'pending']]);
    } finally {
      await other.end();
      await store.close();
    }
  });

  it('renews the retention lease between the partition steps, and a lost lease stops the pass before a range is detached', async () => {
    const now = Date.now();
    const { store, partitions } = await open();
    try {
      const old = now - 10 * DAY_MS;
      await store.saveEvent(event('old', { receivedAt: old }));
      const lost = await store.maintainPartitions({ now, storedBefore: now - 5 * DAY_MS, maxEvents: 1_000, renew: async () => false });
      expect(lost).toMatchObject({ interrupted: true, dropped: 0, byAge: 0 });
      expect(await partitions()).toContain(`events_${day(old)}`);
      let renewals = 0;
      const held = await store.maintainPartitions({ now, storedBefore: now - 5 * DAY_MS, maxEvents: 1_000, renew: async () => (renewals += 1) > 0 });
      expect(held).toMatchObject({ interrupted: false, byAge: 1 });
      expect(renewals).toBeGreaterThanOrEqual(4); // before the range's first detach and after each of the three
      expect(await partitions()).not.toContain(`events_${day(old)}`);
    } finally {
      await store.close();
    }
  });

  it('a commit-order read from a position it handed out reads only the partitions from that position\'s time on', async () => {
    const now = Date.now();
    const { store, url } = await open();
    const pool = new pg.Pool({ connectionString: url });
    const sent: { text: string; values: unknown[] }[] = [];
    try {
      await store.saveEvent(event('old', { receivedAt: now - 10 * DAY_MS }));
      const reader = new NewEventQueries(recording(pool, sent));
      const start = await store.streamPosition({ now: true });
      await store.saveEvent(event('first', { receivedAt: now }));
      const first = await readNew(reader, start, 1, 10);
      expect(first.transferIds).toEqual(['first']);
      await store.saveEvent(event('second', { receivedAt: now }));
      expect((await readNew(reader, first.position, 1, 10)).transferIds).toEqual(['second']);
      // The bound reaches the plan as a sub-select: the partitions before it are skipped when the read runs.
      const lines = await analyzed(pool, sent.at(-1)!);
      const scans = (partition: string): string[] => lines.filter((line) => line.includes(` on ${partition} `));
      expect(scans(`events_${day(now)}`).some((line) => line.includes('(actual time'))).toBe(true);
      for (const skipped of [`events_${day(now - 10 * DAY_MS)}`, 'events_legacy']) {
        expect(scans(skipped).length).toBeGreaterThan(0);
        expect(scans(skipped).every((line) => line.includes('(never executed)'))).toBe(true);
      }
    } finally {
      await pool.end();
      await store.close();
    }
  });

  it('a read from inside one large transaction merges the partitions\' (tx, id) indexes, planned once per connection', async () => {
    const { store, url } = await open();
    const pool = new pg.Pool({ connectionString: url, max: 1 });
    try {
      const reader = new NewEventQueries(pool);
      const now = Date.now();
      // An old partition the reads' bound leaves out, then an import's shape: thousands of events committed by one transaction.
      await store.saveEvent(event('old', { receivedAt: now - 10 * DAY_MS }));
      await pool.query(bulkInsert('old', now - 10 * DAY_MS, 30_000));
      const start = await reader.streamPosition({ now: true });
      await pool.query(bulkInsert('new', now, 3_000));
      await pool.query('ANALYZE events'); // as autovacuum does after such an insert: the planner knows the rows
      const { ids } = await readNew(reader, start, 1200, 100);
      expect(new Set(ids).size).toBe(1200);
      expect(ids).toEqual([...ids].sort((a, b) => a - b));
      // Values the planner cannot see give every read the same plan: after the first five (planned for their
      // values, as every prepared statement is), the cached one is run; a sort of the transaction's rows is not.
      const [prepared] = await preparedStatements(pool, 'new_events');
      expect(Number(prepared!.custom_plans)).toBeLessThanOrEqual(5);
      expect(Number(prepared!.generic_plans)).toBeGreaterThanOrEqual(7);
    } finally {
      await pool.end();
      await store.close();
    }
  });

  it('a search by one indexed column is planned once per connection; one by two is planned for its values', async () => {
    const { store, url } = await open();
    const pool = new pg.Pool({ connectionString: url, max: 1 });
    try {
      for (let i = 0; i < 3; i++) await store.saveEvent(event(`t${i}`, { checkoutId: `c${i % 2}`, email: `b${i}@example.com` }));
      const events = new EventQueries(pool);
      for (let i = 0; i < 8; i++) {
        expect((await events.list({ checkoutId: `c${i % 2}` }, { limit: 10 })).items.length).toBe(i % 2 ? 1 : 2);
        expect((await events.list({ checkoutId: 'c0', email: 'b2@example.com' }, { limit: 10 })).items.map((e) => e.transferId)).toEqual(['t2']);
      }
      const prepared = await preparedStatements(pool, 'events_list');
      expect(prepared).toHaveLength(1);
      expect(prepared[0]!.statement).toContain('e.checkout_id = $1');
      expect(prepared[0]!.statement).not.toContain('lower(e.email)');
      expect(Number(prepared[0]!.generic_plans)).toBeGreaterThanOrEqual(3);
    } finally {
      await pool.end();
      await store.close();
    }
  });

  it('store copy writes a delivery to the queue or the history by its state, and moves it when a later copy finds it settled', async () => {
    const source = await open();
    const target = await open();
    const options = { batchSize: 2, shouldStop: () => false, onProgress: () => {}, now: () => Date.now() };
    try {
      const saved = await source.store.saveEvent(event('copied', { deliveries: [forward('a'), forward('off', { deadReason: 'rule disabled' })] }));
      const [a, off] = (await source.store.listDeliveries({ eventId: saved.id }, { limit: 10 })).items.map((d) => d.id).reverse();
      expect((await copyStore(source.store, target.store, options)).complete).toBe(true);
      expect(await target.rows('pending_deliveries')).toEqual([a]);
      expect(await target.rows('delivery_history')).toEqual([off]);
      const [claimed] = await source.store.claimDueDeliveries({ limit: 5, leaseMs: 60_000 });
      expect(await source.store.recordAttempt(claimed!.id, claimed!.leaseToken, attempt(1, 'delivered'), { state: 'delivered' })).toBe(true);
      expect((await copyStore(source.store, target.store, options)).complete).toBe(true);
      expect(await target.rows('pending_deliveries')).toEqual([]);
      expect(await target.rows('delivery_history')).toEqual([a, off]);
      expect(await target.store.getDelivery(a!)).toMatchObject({ state: 'delivered', attemptLog: [expect.objectContaining({ attempt: 1 })] });
    } finally {
      await source.store.close();
      await target.store.close();
    }
  });

  it('retention leaves an old event to its partition\'s drop until all of the partition is that old: no row deleted ahead of it', async () => {
    const now = Date.now();
    const { store } = await open();
    try {
      // Written at the start of today's partition, older than the limit; the partition is not (it ends tomorrow).
      const dayStart = Math.floor(now / DAY_MS) * DAY_MS;
      const kept = await store.saveEvent(event('kept', { receivedAt: dayStart }));
      const maxAgeDays = (now - dayStart - 1) / DAY_MS;
      const pruner = new RetentionPruner({
        store, logger: pino({ level: 'silent' }), settings: { maxAgeDays, maxEvents: 1_000, intervalMs: 60_000, batchSize: 10 }, pauseBetweenBatchesMs: 0,
      });
      expect(await pruner.runOnce()).toMatchObject({ byAge: 0, interrupted: false });
      expect(await store.getEvent(kept.id)).not.toBeNull();
      // The store's batched delete itself still deletes by age when asked to (SQLite's, and the legacy rows').
      expect(await store.pruneEventsOlderThan(dayStart + 1, 10)).toBe(1);
    } finally {
      await store.close();
    }
  });
});
