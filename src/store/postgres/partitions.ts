import type pg from 'pg';

/**
 * The time partitions of events, delivery_history (settled deliveries) and delivery_attempts (migration 013):
 * ranges of written_at, the same ranges in all three tables, so an event, its settled deliveries and its
 * attempts are in partitions of one range and go together. Pending deliveries are in no partition. Ranges
 * are `days` long, aligned on UTC midnight; the legacy partition (everything stored before the migration,
 * written_at 0) ends at 1.
 */
export const PARTITIONED_TABLES = ['events', 'delivery_history', 'delivery_attempts'] as const;

/** `retention.partitionDays`' default: about ten partitions per table at a 60-day history. */
export const DEFAULT_PARTITION_DAYS = 7;

export const DAY_MS = 24 * 60 * 60 * 1000;
/**
 * The three tables themselves, not their partitions: enough to keep every write out (a write locks its table
 * first), and it does not wait for autovacuum on the partitions being written, as locking them all would.
 */
const PARENTS_ONLY = PARTITIONED_TABLES.map((table) => `ONLY ${table}`).join(', ');
/** How many partitions beyond the current one maintenance keeps created. */
export const PARTITIONS_AHEAD = 2;
/** Creation and drops take turns across nodes on this transaction lock ("hookpart" in ASCII). */
const PARTITION_LOCK = 0x686f6f6b70617274;

export interface TimePartition {
  /** The range's suffix: `legacy`, or `p` and its first UTC day (`p20261128`). */
  suffix: string;
  from: number;
  to: number;
}

/** Whether a failed insert found no partition for its written_at (one dropped or never created). */
export function isMissingPartition(err: unknown): boolean {
  const cause = (err as { cause?: unknown }).cause ?? err; // a store error keeps the database's as its cause
  return (cause as { code?: string }).code === '23514' && /no partition of relation/.test(String((cause as Error).message));
}

const BOUND = /FROM \((MINVALUE|'?(-?\d+)'?)\) TO \('?(-?\d+)'?\)/;

/** The partitions of events, oldest first (the other two tables have the same ranges). */
export async function listPartitions(db: pg.ClientBase | pg.Pool): Promise<TimePartition[]> {
  const { rows } = await db.query<{ name: string; bound: string }>(`
    SELECT c.relname AS name, pg_get_expr(c.relpartbound, c.oid) AS bound
    FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = 'events'::regclass`);
  return rows
    .map((row) => {
      const match = BOUND.exec(row.bound);
      if (!match) throw new Error(`events partition ${row.name} has an unexpected bound: ${row.bound}`);
      return { suffix: row.name.slice('events_'.length), from: match[1] === 'MINVALUE' ? Number.NEGATIVE_INFINITY : Number(match[2]), to: Number(match[3]) };
    })
    .sort((a, b) => a.from - b.from);
}

/** A range's first written_at as a query parameter (the legacy partition's is MINVALUE). */
const lowerBound = (range: { from: number }): number => (Number.isFinite(range.from) ? range.from : Number.MIN_SAFE_INTEGER);
/** The partition of the rows stored before migration 013. */
export const isLegacy = (range: TimePartition): boolean => range.suffix === 'legacy';
/** A range's partition bound, as CREATE and ATTACH take it. */
const forValues = (range: TimePartition): string => `FOR VALUES FROM (${Number.isFinite(range.from) ? range.from : 'MINVALUE'}) TO (${range.to})`;

/** The range holding `time` for partitions of `days`, clipped to the ranges already there (a changed size). */
function rangeFor(time: number, days: number, existing: readonly TimePartition[]): TimePartition | null {
  if (existing.some((p) => p.from <= time && time < p.to)) return null;
  const size = days * DAY_MS;
  let from = Math.floor(time / size) * size;
  let to = from + size;
  for (const p of existing) {
    if (p.to <= time) from = Math.max(from, p.to);
    if (p.from > time) to = Math.min(to, p.from);
  }
  const day = new Date(from).toISOString().slice(0, 10).replaceAll('-', '');
  return { suffix: `p${day}`, from, to };
}

/** Runs `fn` in one transaction holding the partition lock, on a connection of its own. */
async function locked<T>(pool: pg.Pool, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    await client.query('BEGIN');
    // Creating or dropping a partition takes its table's strongest lock for an instant: never wait long for
    // it behind a reader (ingest would queue behind the wait); the next pass tries again.
    await client.query("SET LOCAL lock_timeout = '2s'");
    await client.query('SELECT pg_advisory_xact_lock($1)', [PARTITION_LOCK]);
    const result = await fn(client);
    await client.query('COMMIT');
    return result;
  } catch (err) {
    await client.query('ROLLBACK').catch((rollbackError: unknown) => {
      broken = rollbackError as Error;
    });
    throw err;
  } finally {
    client.release(broken);
  }
}

/**
 * Creates the partitions holding `times` that are not there yet, in all three tables; returns how many
 * ranges it created. Safe on any number of nodes at once (they take turns).
 */
export function createPartitions(pool: pg.Pool, times: readonly number[], days: number): Promise<number> {
  return locked(pool, async (client) => {
    const existing = await listPartitions(client);
    let created = 0;
    for (const time of [...new Set(times)].sort((a, b) => a - b)) {
      const range = rangeFor(time, days, existing);
      if (!range) continue;
      // Each CREATE locks its table: all three at once, in ingest's order, rather than one after the other.
      if (created === 0) await client.query(`LOCK TABLE ${PARENTS_ONLY} IN ACCESS EXCLUSIVE MODE`);
      for (const table of PARTITIONED_TABLES) {
        await client.query(`CREATE TABLE ${table}_${range.suffix} PARTITION OF ${table} ${forValues(range)}`);
      }
      existing.push(range);
      created += 1;
    }
    return created;
  });
}

/** The current partition and PARTITIONS_AHEAD after it. */
export function ensurePartitionsAhead(pool: pg.Pool, now: number, days: number): Promise<number> {
  return createPartitions(pool, Array.from({ length: PARTITIONS_AHEAD + 1 }, (_, i) => now + i * days * DAY_MS), days);
}

/**
 * Events of a range with a pending delivery (a blocked ordered key, a disabled rule's held delivery) move to
 * the partition of `now`, with their settled deliveries and attempts (an UPDATE of written_at moves a row),
 * so dropping the range loses none of them and they do not hold it; the pending deliveries stay in the
 * queue, their written_at following. Found through the queue (pending_deliveries), never by reading the
 * range. `where` narrows the events (alias e).
 */
const MOVE_PENDING = (where: string): string => `
  WITH moving AS (
    SELECT DISTINCT p.event_id AS id, p.written_at FROM pending_deliveries p WHERE p.written_at >= $1 AND p.written_at < $2
  ), moved_events AS (
    UPDATE events e SET written_at = $3 FROM moving m WHERE e.id = m.id AND e.written_at = m.written_at AND ${where} RETURNING e.id, m.written_at AS was
  ), queued AS (
    UPDATE pending_deliveries d SET written_at = $3 FROM moved_events m WHERE d.event_id = m.id AND d.written_at = m.was RETURNING d.id, m.was
  ), settled AS (
    UPDATE delivery_history d SET written_at = $3 FROM moved_events m WHERE d.event_id = m.id AND d.written_at = m.was RETURNING d.id, m.was
  ), moved_attempts AS (
    UPDATE delivery_attempts a SET written_at = $3 FROM (SELECT * FROM queued UNION ALL SELECT * FROM settled) d
    WHERE a.delivery_id = d.id AND a.written_at = d.was RETURNING 1
  )
  SELECT count(*)::int AS n FROM moved_events`;

/** Moves the pending events of [from, to) matching `where` to the partition of `now`; returns how many. */
export async function movePending(db: pg.ClientBase | pg.Pool, range: { from: number; to: number }, now: number, where = 'true'): Promise<number> {
  return (await db.query<{ n: number }>(MOVE_PENDING(where), [lowerBound(range), range.to, now])).rows[0]!.n;
}

/**
 * About how many events a partition holds, without counting them: the span of its ids (two probes of its
 * primary key). Ids are drawn in order as events are written, so a range's are nearly contiguous; the span
 * is never below the count (ids lost to rolled-back inserts, events moved out, make it larger).
 */
export async function estimateEvents(db: pg.ClientBase | pg.Pool, range: TimePartition): Promise<number> {
  return (await estimateAll(db, [range]))[0]!;
}

/** estimateEvents of each range, in one statement: one connection of the pool, whatever their number. */
export async function estimateAll(db: pg.ClientBase | pg.Pool, ranges: readonly TimePartition[]): Promise<number[]> {
  if (ranges.length === 0) return [];
  const spans = ranges.map((range, i) => `(SELECT (max(id) - min(id) + 1)::text FROM events_${range.suffix}) AS n${i}`);
  const { rows } = await db.query<Record<string, string | null>>(`SELECT ${spans.join(', ')}`);
  return ranges.map((_, i) => Number(rows[0]![`n${i}`] ?? 0));
}

/** Whether a partition of events holds any row (one probe). */
export async function holdsEvents(db: pg.ClientBase | pg.Pool, range: TimePartition): Promise<boolean> {
  return (await db.query<{ any: boolean }>(`SELECT EXISTS (SELECT 1 FROM events_${range.suffix}) AS any`)).rows[0]!.any;
}

/**
 * Drops one range in all three tables without holding up ingest: its pending events move to the partition of
 * `now` (which must exist); each partition is detached CONCURRENTLY (which never blocks reads or writes of
 * the table, only waits for the statements that may still see it; one left half-detached by an interrupted
 * pass is finished first); then, in one transaction, the redrives of its deliveries go (no foreign key holds
 * them) and the detached tables are renamed `discarded_*`, for freeDiscarded to drop. Should a pending
 * delivery of one of its events have been written meanwhile (a replay), the range is attached again instead
 * and the next pass moves it.
 * `renew` (the retention lease) is called before the range's first detach (false: null, nothing dropped) and
 * after each.
 * Returns about how many events were dropped (estimateEvents), how many moved, and whether the range went.
 */
export async function dropPartition(pool: pg.Pool, range: TimePartition, now: number, renew: () => Promise<boolean>): Promise<{ dropped: number; moved: number; removed: boolean } | null> {
  const names = PARTITIONED_TABLES.map((table) => `${table}_${range.suffix}`);
  const moved = await movePending(pool, range, now);
  const dropped = await estimateEvents(pool, range);
  // A lost lease stops the pass before the range's first detach; once one is detached, the range is finished
  // (a detached table no pass would find again), renewing on the way. Events go last: until they are
  // detached the range is listed, so a pass interrupted half-way finds it and finishes it.
  if (!(await renew())) return null;
  for (const [i, table] of [...PARTITIONED_TABLES.entries()].reverse()) {
    const { rows } = await pool.query<{ pending: boolean | null }>(
      'SELECT i.inhdetachpending AS pending FROM pg_inherits i WHERE i.inhrelid = to_regclass($1) AND i.inhparent = $2::regclass', [names[i], table]);
    if (rows.length === 0) continue; // detached already
    await pool.query(`ALTER TABLE ${table} DETACH PARTITION ${names[i]} ${rows[0]!.pending ? 'FINALIZE' : 'CONCURRENTLY'}`);
    await renew();
  }
  return locked(pool, async (client) => {
    const late = (await client.query<{ late: boolean }>(
      'SELECT EXISTS (SELECT 1 FROM pending_deliveries WHERE written_at >= $1 AND written_at < $2) AS late', [lowerBound(range), range.to])).rows[0]!.late;
    if (late) {
      // Attached back (the check DETACH CONCURRENTLY left spares the scan): the next pass moves them.
      for (const [i, table] of PARTITIONED_TABLES.entries()) {
        await client.query(`ALTER TABLE ${table} ATTACH PARTITION ${names[i]} ${forValues(range)}`);
      }
      return { dropped: 0, moved, removed: false };
    }
    await client.query(`DELETE FROM delivery_redrives r USING ${names[1]} d WHERE r.delivery_id = d.id`);
    for (const name of names) await client.query(`ALTER TABLE ${name} RENAME TO ${DISCARDED}${name}`);
    return { dropped, moved, removed: true };
  });
}

/** The prefix of a detached partition decided for dropping: no pass looks in it again, any pass may free it. */
const DISCARDED = 'discarded_';
/** Least pause between two steps of freeing discarded partitions. */
const FREE_PAUSE_MS = 50;

/**
 * Frees the discarded partitions (dropPartition) one file set at a time: each index, then each table, in a
 * statement of its own, pausing between them as long as the last one took (at least FREE_PAUSE_MS). The
 * file system frees a dropped relation's files when its transaction commits, and on some (ext4 mounted with
 * `discard`) that holds up every other file's fsync meanwhile, the acknowledgements' WAL flushes included:
 * about 100 ms twice per GB, measured. A whole range dropped at once stalled them for its sum.
 * Leftovers of an interrupted pass are freed by the next; two nodes freeing at once skip what the other
 * dropped. Returns how many tables it dropped.
 */
export async function freeDiscarded(pool: pg.Pool, sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))): Promise<number> {
  const { rows } = await pool.query<{ tbl: string; idx: string | null; con: string | null }>(`
    SELECT t.relname AS tbl, ic.relname AS idx, con.conname AS con
    FROM pg_class t
    LEFT JOIN pg_index i ON i.indrelid = t.oid
    LEFT JOIN pg_class ic ON ic.oid = i.indexrelid
    LEFT JOIN pg_constraint con ON con.conindid = i.indexrelid AND con.conrelid = t.oid
    WHERE t.relnamespace = current_schema()::regnamespace AND t.relkind = 'r' AND starts_with(t.relname, $1)
    ORDER BY t.relname, ic.relname`, [DISCARDED]);
  const steps = rows.filter((row) => row.idx !== null).map((row) => row.con ? `ALTER TABLE IF EXISTS ${row.tbl} DROP CONSTRAINT IF EXISTS ${row.con}` : `DROP INDEX IF EXISTS ${row.idx}`);
  const tables = [...new Set(rows.map((row) => row.tbl))];
  steps.push(...tables.map((table) => `DROP TABLE IF EXISTS ${table}`));
  for (const [i, step] of steps.entries()) {
    const started = Date.now();
    await pool.query(step);
    if (i < steps.length - 1) await sleep(Math.max(FREE_PAUSE_MS, Date.now() - started));
  }
  return tables.length;
}
