import type pg from 'pg';
import { HookrelayError } from '../../errors.js';
import type { CopiedDelivery, CopiedRedrive, CopiedSetting, CopyExtent, CopyRows, CopyTable } from '../copyable-store.js';
import { MAX_RECEIVED_COUNT, type StoredEvent } from '../event-store.js';
import type { Job } from '../job-store.js';
import type { Outage } from '../outage-store.js';
import type { StoredAttempt } from '../outbox-store.js';
import type { KeptRuleSet } from '../rule-set-store.js';
import { quarantineValues } from '../quarantine-columns.js';
import { copyConflict } from '../copy-conflict.js';
import { COPIED_DELIVERY_COLUMNS, DELIVERY_COLUMNS, toCopiedDelivery, toCopiedRedrive, toOutage, toJob, toKeptRuleSet, toStoredAttempt, type CopiedDeliveryColumns, type RuleSetRow, type DeliveryRow, type JobRow, type OutageRow, type RedriveRow } from '../stored-rows.js';
import { toStoredEvent, type EventRow } from '../sqlite/event-rows.js';
import type { ClockOffset } from './clock-offset.js';
import { eventText, readEventRow } from '../storable-text.js';
import type { SeenKeyRecord } from '../seen-keys-store.js';

/** Tables keyed by a text column rather than an id: pages end at a name or hash, and no sequence is advanced. */
/** A ledger row (`k`) whose event is no longer stored: what a copy carries (a kept event carries its own key, as on SQLite). */
const REMOVED_EVENT = 'NOT EXISTS (SELECT 1 FROM events e WHERE e.id = k.event_id)';

type KeyedByText = 'ruleSets' | 'settings' | 'seenKeys';

const TABLE_NAMES: Record<Exclude<CopyTable, KeyedByText>, string> = {
  events: 'events',
  deliveries: 'delivery_history', // its sequence, which pending_deliveries shares
  outages: 'outages',
  redrives: 'delivery_redrives',
  attempts: 'delivery_attempts',
  jobs: 'admin_jobs',
};

// A whole batch is one statement (unnest of one array per column). An id already there takes the row's
// changing columns only when its identity matches (the WHERE); RETURNING answers only for rows inserted or
// updated, so a row under another identity is missing from the answer, which becomes store_copy_conflict.
const WRITE_SQL: Record<CopyTable, string> = {
  // The same value already there answers (a no-op update); a different one answers nothing: a conflict.
  settings: `
    INSERT INTO settings AS t (name, value, created_at)
    SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[])
    ON CONFLICT (name) DO UPDATE SET name = excluded.name
    WHERE t.value = excluded.value
    RETURNING t.name AS id, (t.xmax = 0) AS inserted`,
  ruleSets: `
    INSERT INTO rule_sets (hash, kind, rules, first_loaded_at)
    SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[])
    ON CONFLICT (hash) DO NOTHING
    RETURNING hash AS id, true AS inserted`,
  // A key already there answers when it names the same first event (the trigger on events wrote the keys of
  // the events copied before it); another event answers nothing: a conflict.
  seenKeys: `
    INSERT INTO seen_keys AS t (key, event_id, seen_at)
    SELECT * FROM unnest($1::uuid[], $2::bigint[], $3::bigint[])
    ON CONFLICT (key) DO UPDATE SET key = excluded.key WHERE t.event_id = excluded.event_id
    RETURNING t.key::text AS id, (t.xmax = 0) AS inserted`,
  // Events, deliveries and attempts are partitioned (migration 013): no unique id to conflict on. A row whose
  // id is there is updated when its identity matches (in its partition: written_at, which a copy derives from
  // when the event was stored, as retention counts its age, and from the event and delivery for the others),
  // a new id is inserted, and a row under its id with another identity answers nothing: a conflict.
  events: `
    WITH input AS (
      SELECT i.*, greatest(i.imported_at, i.received_at) AS written_at
      FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::bigint[],
                  $10::bigint[], $11::int[], $12::text[], $13::bytea[], $14::bigint[], $15::text[], $16::int[], $17::bigint[],
                  $18::bigint[], $19::text[], $20::float8[], $21::text[], $22::text[], $23::bigint[], $24::text[], $25::boolean[])
        AS i(id, source, event, transfer_id, checkout_id, email, wallet_address, validation, received_at, last_received_at, received_count, headers,
             body, imported_at, rule_set_hash, edit_number, edited_from, edited_at, edited_via, total_price_usd, issues, quarantine, released_at,
             released_by, release_forced)
    ), updated AS (
      UPDATE events t SET received_count = i.received_count, last_received_at = i.last_received_at, quarantine = i.quarantine,
        released_at = i.released_at, released_by = i.released_by, release_forced = i.release_forced, rule_set_hash = i.rule_set_hash
      FROM input i
      WHERE t.id = i.id AND t.written_at = i.written_at
        AND (t.source, t.event, t.transfer_id, t.edit_number, t.received_at, t.body) = (i.source, i.event, i.transfer_id, i.edit_number, i.received_at, i.body)
      RETURNING t.id, false AS inserted
    ), inserted AS (
      INSERT INTO events (id, source, event, transfer_id, checkout_id, email, wallet_address, validation, received_at, last_received_at,
                          received_count, headers, body, imported_at, rule_set_hash, edit_number, edited_from, edited_at, edited_via,
                          total_price_usd, issues, quarantine, released_at, released_by, release_forced, written_at)
      SELECT * FROM input i WHERE NOT EXISTS (SELECT 1 FROM events x WHERE x.id = i.id)
      RETURNING id, true AS inserted
    )
    SELECT * FROM updated UNION ALL SELECT * FROM inserted`,
  // A delivery is in the queue or the history by its state (migration 013): one already there under its
  // identity is taken out of its table and written again, with the copy's every column, to the table of its
  // state now; a new id is inserted there.
  deliveries: `
    WITH input AS (
      SELECT i.*, (SELECT e.written_at FROM events e WHERE e.id = i.event_id) AS written_at
      FROM unnest($1::bigint[], $2::bigint[], $3::text[], $4::text[], $5::text[], $6::text[], $7::bytea[], $8::text[], $9::int[],
                  $10::bigint[], $11::text[], $12::int[], $13::text[], $14::text[], $15::bigint[], $16::bigint[], $17::text[],
                  $18::bigint[], $19::bigint[], $20::int[], $21::text[])
        AS i(id, event_id, rule_id, rule_set_hash, origin, state, body, content_type, attempts, next_attempt_at, lease_token, last_status,
             last_error, dead_reason, created_at, updated_at, order_key, order_seq, blocked_since, pass_offset, retryable_dead_destination)
    ), replaced AS (
      DELETE FROM pending_deliveries t USING input i
      WHERE t.id = i.id AND (t.event_id, t.rule_id, t.rule_set_hash, t.origin, t.created_at) = (i.event_id, i.rule_id, i.rule_set_hash, i.origin, i.created_at)
      RETURNING t.id
    ), replaced_settled AS (
      DELETE FROM delivery_history t USING input i
      WHERE t.id = i.id AND t.written_at = i.written_at
        AND (t.event_id, t.rule_id, t.rule_set_hash, t.origin, t.created_at) = (i.event_id, i.rule_id, i.rule_set_hash, i.origin, i.created_at)
      RETURNING t.id
    ), fresh AS (
      SELECT i.id FROM input i WHERE NOT EXISTS (SELECT 1 FROM deliveries x WHERE x.id = i.id)
    ), answered AS (
      SELECT id, false AS inserted FROM replaced UNION ALL SELECT id, false FROM replaced_settled UNION ALL SELECT id, true FROM fresh
    ), written AS (
      -- A delivery whose event the target lacks has no partition to go to: not null fails, a conflict.
      SELECT i.* FROM input i JOIN answered a ON a.id = i.id
    ), queued AS (
      INSERT INTO pending_deliveries SELECT * FROM written WHERE state = 'pending' RETURNING id
    ), settled AS (
      INSERT INTO delivery_history SELECT * FROM written WHERE state <> 'pending' RETURNING id
    )
    SELECT * FROM answered`,
  outages: `
    INSERT INTO outages AS t (id, destination, opened_at, closed_at, last_probe_at, redriven)
    SELECT * FROM unnest($1::bigint[], $2::text[], $3::bigint[], $4::bigint[], $5::bigint[], $6::int[])
    ON CONFLICT (id) DO UPDATE SET closed_at = excluded.closed_at, last_probe_at = excluded.last_probe_at, redriven = excluded.redriven
    WHERE (t.destination, t.opened_at) = (excluded.destination, excluded.opened_at)
    RETURNING t.id, (t.xmax = 0) AS inserted`,
  redrives: `
    INSERT INTO delivery_redrives AS t (id, delivery_id, outage_id, kind, redriven_at, due_at)
    SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::text[], $5::bigint[], $6::bigint[])
    ON CONFLICT (id) DO UPDATE SET kind = excluded.kind
    WHERE (t.delivery_id, t.outage_id, t.kind, t.redriven_at) = (excluded.delivery_id, excluded.outage_id, excluded.kind, excluded.redriven_at)
    RETURNING t.id, (t.xmax = 0) AS inserted`,
  attempts: `
    WITH input AS (
      SELECT i.*, (SELECT d.written_at FROM deliveries d WHERE d.id = i.delivery_id) AS written_at
      FROM unnest($1::bigint[], $2::bigint[], $3::int[], $4::bigint[], $5::int[], $6::text[], $7::int[], $8::text[], $9::text[],
                  $10::text[], $11::text[])
        AS i(id, delivery_id, attempt, started_at, duration_ms, url_origin, status, error_code, error_message, response_excerpt, outcome)
    ), updated AS (
      UPDATE delivery_attempts t SET attempt = i.attempt FROM input i
      WHERE t.id = i.id AND t.written_at = i.written_at
        AND (t.delivery_id, t.attempt, t.started_at) = (i.delivery_id, i.attempt, i.started_at)
      RETURNING t.id, false AS inserted
    ), inserted AS (
      INSERT INTO delivery_attempts (id, delivery_id, attempt, started_at, duration_ms, url_origin, status, error_code, error_message,
                                     response_excerpt, outcome, written_at)
      SELECT * FROM input i WHERE NOT EXISTS (SELECT 1 FROM delivery_attempts x WHERE x.id = i.id)
      RETURNING id, true AS inserted
    )
    SELECT * FROM updated UNION ALL SELECT * FROM inserted`,
  jobs: `
    INSERT INTO admin_jobs AS t (id, kind, state, filter, rule_id, total, processed, created, failed, started_at, finished_at, error, summary)
    SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::text[], $6::int[], $7::int[], $8::int[], $9::int[],
                         $10::bigint[], $11::bigint[], $12::text[], $13::text[])
    ON CONFLICT (id) DO UPDATE SET state = excluded.state, total = excluded.total, processed = excluded.processed, created = excluded.created,
      failed = excluded.failed, finished_at = excluded.finished_at, error = excluded.error, summary = excluded.summary
    WHERE (t.kind, t.started_at) = (excluded.kind, excluded.started_at)
    RETURNING t.id, (t.xmax = 0) AS inserted`,
};

/**
 * Ids are identities GENERATED BY DEFAULT: they take the given values, but their sequence does not see
 * them. After each batch the sequence moves past the batch's highest id (never back), so a node started on
 * the target, even during an interrupted copy, hands out ids no copied row has.
 */
const advanceSequence = (table: string): string => `
  SELECT setval(pg_get_serial_sequence('${table}', 'id'),
                greatest($1::bigint, coalesce(pg_sequence_last_value(pg_get_serial_sequence('${table}', 'id')::regclass), 0)))`;

/**
 * Ordered rows take their sequence numbers from one database sequence: it moves past the highest copied one
 * (never back), so a row a node orders later on the target queues behind the copied rows of its key.
 */
const ADVANCE_ORDER_SEQ = `
  SELECT setval('delivery_order_seq', greatest(max_seq, coalesce(pg_sequence_last_value('delivery_order_seq'), 0)))
  FROM (SELECT max(seq) AS max_seq FROM unnest($1::bigint[]) AS seq) AS copied WHERE max_seq IS NOT NULL`;

/** Whole tables read and written with their ids, for `hookrelay store copy`. Due times cross in the node's clock. */
export class CopyQueries {
  constructor(
    private readonly db: pg.Pool,
    private readonly clock: ClockOffset,
  ) {}

  async extent(): Promise<CopyExtent> {
    const of = async (table: string) => {
      const row = (await this.db.query<{ n: number; lo: number | null; hi: number | null }>(`SELECT count(*) AS n, min(id) AS lo, max(id) AS hi FROM ${table}`)).rows[0]!;
      return { rows: row.n, minId: row.lo, maxId: row.hi };
    };
    const ruleSets = (await this.db.query<{ n: number }>('SELECT count(*) AS n FROM rule_sets')).rows[0]!.n;
    const settings = (await this.db.query<{ n: number }>('SELECT count(*) AS n FROM settings')).rows[0]!.n;
    const seenKeys = (await this.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM seen_keys k WHERE ${REMOVED_EVENT}`)).rows[0]!.n;
    return {
      settings: { rows: settings, minId: null, maxId: null },
      ruleSets: { rows: ruleSets, minId: null, maxId: null },
      events: await of('events'),
      seenKeys: { rows: seenKeys, minId: null, maxId: null },
      deliveries: await of('deliveries'),
      outages: await of('outages'),
      redrives: await of('delivery_redrives'),
      attempts: await of('delivery_attempts'),
      jobs: await of('admin_jobs'),
    };
  }

  async read<T extends CopyTable>(table: T, after: number | string | null, limit: number): Promise<CopyRows[T][]> {
    if (table === 'ruleSets') {
      // COLLATE "C": byte order, the same whatever the database's collation, so pages never skip a hash.
      const { rows } = await this.db.query<RuleSetRow>(
        'SELECT * FROM rule_sets WHERE hash COLLATE "C" > $1 ORDER BY hash COLLATE "C" LIMIT $2',
        [(after as string | null) ?? '', limit],
      );
      return rows.map(toKeptRuleSet) as CopyRows[T][];
    }
    if (table === 'settings') {
      const { rows } = await this.db.query<{ name: string; value: string; created_at: number }>(
        'SELECT * FROM settings WHERE name COLLATE "C" > $1 ORDER BY name COLLATE "C" LIMIT $2',
        [(after as string | null) ?? '', limit],
      );
      return rows.map((r): CopiedSetting => ({ name: r.name, value: r.value, createdAt: r.created_at })) as CopyRows[T][];
    }
    if (table === 'seenKeys') {
      const { rows } = await this.db.query<{ key: string; event_id: number; seen_at: number }>(
        `SELECT key::text, event_id, seen_at FROM seen_keys k WHERE ($1::uuid IS NULL OR key > $1::uuid) AND ${REMOVED_EVENT} ORDER BY key LIMIT $2`,
        [after, limit],
      );
      return rows.map((r): SeenKeyRecord => ({ key: r.key, eventId: r.event_id, seenAt: r.seen_at })) as CopyRows[T][];
    }
    const values = [(after as number | null) ?? 0, limit];
    switch (table) {
      case 'events':
        return (await this.db.query<EventRow>('SELECT * FROM events WHERE id > $1 ORDER BY id LIMIT $2', values)).rows.map((row) => toStoredEvent(readEventRow(row))) as CopyRows[T][];
      case 'deliveries': {
        const { rows } = await this.db.query<DeliveryRow & CopiedDeliveryColumns>(
          `SELECT ${DELIVERY_COLUMNS}, ${COPIED_DELIVERY_COLUMNS} FROM deliveries WHERE id > $1 ORDER BY id LIMIT $2`,
          values,
        );
        return rows.map((row): CopiedDelivery => toCopiedDelivery(row, row.next_attempt_at === null ? null : this.clock.toNode(row.next_attempt_at))) as CopyRows[T][];
      }
      case 'outages':
        return (await this.db.query<OutageRow>('SELECT * FROM outages WHERE id > $1 ORDER BY id LIMIT $2', values)).rows.map(toOutage) as CopyRows[T][];
      case 'redrives':
        return (await this.db.query<RedriveRow & { id: number; delivery_id: number }>('SELECT * FROM delivery_redrives WHERE id > $1 ORDER BY id LIMIT $2', values))
          .rows.map(toCopiedRedrive) as CopyRows[T][];
      case 'attempts':
        return (await this.db.query('SELECT * FROM delivery_attempts WHERE id > $1 ORDER BY id LIMIT $2', values)).rows.map(toStoredAttempt) as CopyRows[T][];
      default:
        return (await this.db.query<JobRow>('SELECT * FROM admin_jobs WHERE id > $1 ORDER BY id LIMIT $2', values)).rows.map(toJob) as CopyRows[T][];
    }
  }

  /** In the caller's transaction: a conflict throws, and the caller rolls the batch back. */
  async write<T extends CopyTable>(client: pg.PoolClient, table: T, rows: readonly CopyRows[T][]): Promise<number> {
    if (rows.length === 0) return 0;
    const columns = this.columns(table, rows);
    let answered: { id: number | string; inserted: boolean }[];
    try {
      answered = (await client.query<{ id: number | string; inserted: boolean }>(WRITE_SQL[table], columns)).rows;
    } catch (err) {
      const code = (err as { code?: string }).code;
      // 23505: another unique key (an event's key in the ledger under another id); 23503: a reference the target
      // lacks; 23502: a delivery or attempt whose event or delivery the target lacks (no partition to go to).
      if (code === '23505' || code === '23503' || code === '23502') throw copyConflict(table, firstKey(rows), (err as { detail?: string }).detail ?? (err as Error).message);
      // 22021/22P05: a NUL character, which SQLite keeps and PostgreSQL text cannot hold.
      if (code === '22021' || code === '22P05') {
        throw new HookrelayError('invalid_payload', `${table} ${firstKey(rows)} to ${lastKey(rows)}: a text field holds a NUL character (\\u0000), which PostgreSQL cannot store.`, { table });
      }
      throw err;
    }
    if (table === 'ruleSets') return answered.length;
    const seen = new Set(answered.map((r) => r.id));
    const missing = rows.find((row) => !seen.has(keyAt(row)));
    if (missing) throw copyConflict(table, keyAt(missing), table === 'settings' ? 'another value' : table === 'seenKeys' ? 'first seen as another event' : undefined);
    if (table === 'settings' || table === 'seenKeys') return answered.filter((r) => r.inserted).length;
    const name = TABLE_NAMES[table as Exclude<CopyTable, KeyedByText>];
    await client.query(advanceSequence(name), [Math.max(...rows.map((row) => (row as { id: number }).id))]);
    if (table === 'deliveries') await client.query(ADVANCE_ORDER_SEQ, [(rows as readonly CopiedDelivery[]).map((d) => d.orderSeq)]);
    return answered.filter((r) => r.inserted).length;
  }

  /** One array per column, in the order of the table's INSERT. */
  private columns<T extends CopyTable>(table: T, rows: readonly CopyRows[T][]): unknown[][] {
    const valuesOf = (row: CopyRows[T]): unknown[] => {
      switch (table) {
        case 'settings': {
          const s = row as CopiedSetting;
          return [s.name, s.value, s.createdAt];
        }
        case 'ruleSets': {
          const r = row as KeptRuleSet;
          return [r.hash, r.kind, JSON.stringify(r.rules), r.firstLoadedAt];
        }
        case 'seenKeys': {
          const k = row as SeenKeyRecord;
          return [k.key, k.eventId, k.seenAt];
        }
        case 'events': {
          const e = row as StoredEvent;
          return [e.id, eventText(e.source), eventText(e.event), eventText(e.transferId), eventText(e.checkoutId), eventText(e.email), eventText(e.walletAddress), e.validation, e.receivedAt, e.lastReceivedAt,
            // A count SQLite took beyond an integer (an import before counts were bounded) stays at the largest one.
            Math.min(e.receivedCount, MAX_RECEIVED_COUNT), JSON.stringify(e.headers), e.body, e.importedAt, e.ruleSetHash, e.edit?.number ?? 0, e.edit?.editedFrom ?? null,
            e.edit?.editedAt ?? null, e.edit?.via ?? null, e.totalPriceUsd, ...quarantineValues(e, Boolean)];
        }
        case 'deliveries': {
          const d = row as CopiedDelivery;
          return [d.id, d.eventId, d.ruleId, d.ruleSetHash, d.origin, d.state, d.body, d.contentType, d.attempts,
            d.nextAttemptAt === null ? null : this.clock.toDatabase(d.nextAttemptAt), d.leaseToken, d.lastStatus, d.lastError, d.deadReason,
            d.createdAt, d.updatedAt, d.orderKey, d.orderSeq, d.blockedSince, d.passOffset, d.retryableDeadDestination];
        }
        case 'outages': {
          const o = row as Outage;
          return [o.id, o.destination, o.openedAt, o.closedAt, o.lastProbeAt, o.redriven];
        }
        case 'redrives': {
          const r = row as CopiedRedrive;
          return [r.id, r.deliveryId, r.outageId, r.kind, r.redrivenAt, r.dueAt];
        }
        case 'attempts': {
          const a = row as StoredAttempt;
          return [a.id, a.deliveryId, a.attempt, a.startedAt, a.durationMs, a.urlOrigin, a.status, a.errorCode, a.errorMessage, a.responseExcerpt, a.outcome];
        }
        default: {
          const j = row as Job;
          return [j.id, j.kind, j.state, JSON.stringify(j.filter), j.ruleId, j.total, j.processed, j.created, j.failed, j.startedAt, j.finishedAt,
            j.error, j.summary ? JSON.stringify(j.summary) : null];
        }
      }
    };
    const columns: unknown[][] = [];
    for (const row of rows) {
      valuesOf(row).forEach((value, i) => (columns[i] ??= []).push(value));
    }
    return columns;
  }
}

function keyAt(row: unknown): number | string {
  const { id, hash, name, key } = row as { id?: number; hash?: string; name?: string; key?: string };
  return id ?? hash ?? name ?? key ?? '?';
}

const firstKey = (rows: readonly unknown[]): number | string => keyAt(rows[0]);
const lastKey = (rows: readonly unknown[]): number | string => keyAt(rows.at(-1));
