import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import type { ClaimedDelivery } from '../delivery-queue.js';
import type { BlockedKey, Delivery, DeliveryDetail, DeliveryFilter, DeliveryOrigin, NewDelivery, OutboxStats, Page } from '../outbox-store.js';
import { DELIVERY_COLUMNS, toBlockedKey, toDelivery, toStoredAttempt, type BlockedHeadRow, type DeliveryRow } from '../stored-rows.js';
import { deliveryAfterAttempt, type AttemptToRecord } from '../attempt-to-record.js';
import type { ClockOffset } from './clock-offset.js';
import { NEXT_ORDER_SEQ } from './order-seq.js';
import { named, SqlParams } from './sql-params.js';
import { HISTORY, insertDeliveries, moveDeliveries, NEW_DELIVERY_COLUMNS, PENDING } from './delivery-tables.js';

/**
 * One statement claims a batch: the due rows oldest first, locked with SKIP LOCKED so that workers on other
 * nodes claiming at the same moment take other rows instead of waiting, then leased by moving
 * next_attempt_at to the lease end (database clock) and stamping a token. A worker that dies leaves its rows
 * leased; they fall due again when the lease ends, for any node to claim.
 */
/**
 * Whether a pending row of an ordered rule may be attempted now (parameter: the database's now): no earlier
 * row of its (rule, key) is pending, and no other row of the key holds a live lease. Under READ COMMITTED a
 * claim sees the heads as they were when it started; a head another node has just claimed is locked (SKIP
 * LOCKED passes it) or leased, and its followers still see it pending: one attempt per key in flight.
 */
const HEAD_OF_KEY = (now: string): string => `(d.order_key IS NULL OR NOT EXISTS (
    SELECT 1 FROM pending_deliveries p WHERE p.state = 'pending' AND p.order_key IS NOT NULL
      AND p.rule_id = d.rule_id AND p.order_key = d.order_key AND p.id <> d.id
      AND (p.order_seq < d.order_seq OR (p.lease_token IS NOT NULL AND p.next_attempt_at > ${now}))))`;

const CLAIM = named('claim', `
  WITH due AS (
    SELECT d.id FROM pending_deliveries d WHERE d.state = 'pending' AND d.next_attempt_at <= $1 AND ${HEAD_OF_KEY('$1')}
    ORDER BY d.next_attempt_at, d.id LIMIT $2 FOR UPDATE SKIP LOCKED
  )
  UPDATE pending_deliveries d SET next_attempt_at = $3, lease_token = $4, updated_at = $5
  FROM due WHERE d.id = due.id
  RETURNING d.id, d.event_id, d.rule_id, d.rule_set_hash, d.content_type, d.attempts, d.pass_offset, d.order_key, d.blocked_since, d.last_error,
    -- An event and its deliveries share written_at: the body is read from that one partition.
    COALESCE(d.body, (SELECT e.body FROM events e WHERE e.id = d.event_id AND e.written_at = d.written_at)) AS payload, d.body IS NOT NULL AS has_body`);

/**
 * Records a batch of attempts: each is appended whatever its lease says (it happened), once, even when the
 * batch is sent again after a lost answer; the delivery moves on only if the lease is still the attempt's.
 * A delivery that stays pending is updated in the queue; one that settles moves to the history.
 */
const RECORD_ATTEMPTS = named('record_attempts', `
  WITH input AS (
    SELECT * FROM unnest($1::bigint[], $2::text[], $3::int[], $4::bigint[], $5::int[], $6::text[], $7::int[], $8::text[], $9::text[],
                         $10::text[], $11::text[], $12::text[], $13::bigint[], $14::text[], $15::text[], $17::text[], $18::bigint[], $19::int[])
      AS a(delivery_id, lease_token, attempt, started_at, duration_ms, url_origin, status, error_code, error_message, response_excerpt,
           outcome, state, next_attempt_at, last_error, dead_reason, retryable_dead_destination, blocked_since, pass_offset_step)
  ), logged AS (
    INSERT INTO delivery_attempts (delivery_id, attempt, lease_token, started_at, duration_ms, url_origin, status, error_code, error_message,
                                   response_excerpt, outcome, written_at)
    -- In its delivery's partition: looked up in the queue, in the history only for one settled meanwhile (a lost
    -- lease); the attempt of a delivery retention removed meanwhile is not kept.
    SELECT * FROM (
      SELECT a.delivery_id, a.attempt, a.lease_token, a.started_at, a.duration_ms, a.url_origin, a.status, a.error_code, a.error_message,
             a.response_excerpt, a.outcome, coalesce((SELECT p.written_at FROM ${PENDING} p WHERE p.id = a.delivery_id),
                                                     (SELECT h.written_at FROM ${HISTORY} h WHERE h.id = a.delivery_id)) AS written_at
      FROM input a) w
    WHERE w.written_at IS NOT NULL ORDER BY w.delivery_id
    ON CONFLICT (delivery_id, lease_token, attempt, written_at) DO NOTHING
  ), kept AS (
    UPDATE ${PENDING} d SET attempts = a.attempt, next_attempt_at = a.next_attempt_at, lease_token = NULL,
      last_status = a.status, last_error = a.last_error, dead_reason = a.dead_reason,
      retryable_dead_destination = a.retryable_dead_destination, updated_at = $16::bigint, blocked_since = coalesce(d.blocked_since, a.blocked_since),
      pass_offset = d.pass_offset + a.pass_offset_step
    FROM input a WHERE d.id = a.delivery_id AND d.lease_token = a.lease_token AND a.state = 'pending'
    RETURNING d.id
  ), ${moveDeliveries({
    name: 'settled', from: PENDING, using: 'input a', where: "d.id = a.delivery_id AND d.lease_token = a.lease_token AND a.state <> 'pending'",
    set: {
      state: 'a.state', attempts: 'a.attempt', next_attempt_at: 'a.next_attempt_at', lease_token: 'NULL::text', last_status: 'a.status',
      last_error: 'a.last_error', dead_reason: 'a.dead_reason', retryable_dead_destination: 'a.retryable_dead_destination',
      updated_at: '$16::bigint', blocked_since: 'NULL::bigint',
    },
  })}
  SELECT id FROM kept UNION ALL SELECT id FROM settled_in`);

const INSERT_DELIVERIES = named('insert_deliveries', `
  WITH ${insertDeliveries('planned', `
    SELECT d.event_id, d.rule_id, d.rule_set_hash, $8::text AS origin, CASE WHEN d.dead_reason IS NULL THEN 'pending' ELSE 'dead' END AS state,
           d.body, d.content_type, CASE WHEN d.dead_reason IS NULL THEN $9::bigint + d.delay_ms END AS next_attempt_at, d.dead_reason,
           $10::bigint AS created_at, $10::bigint AS updated_at, d.order_key, ${NEXT_ORDER_SEQ.replaceAll('order_key', 'd.order_key')} AS order_seq,
           -- In its event's partition (a replay of an old event too); no event (removed meanwhile): refused, not null.
           (SELECT e.written_at FROM events e WHERE e.id = d.event_id) AS written_at
    FROM unnest($1::bigint[], $2::text[], $3::text[], $4::bytea[], $5::text[], $6::bigint[], $7::text[], $11::text[]) WITH ORDINALITY
      AS d(event_id, rule_id, rule_set_hash, body, content_type, delay_ms, dead_reason, order_key, n)
    ORDER BY d.n`, NEW_DELIVERY_COLUMNS)}
  SELECT id FROM planned_rows ORDER BY id`);

/** Rows of claims whose answer never came back (see `claim`): due again at once, as nobody works on them. */
const RELEASE_UNANSWERED = named('release_unanswered', `
  UPDATE pending_deliveries SET next_attempt_at = $2, lease_token = NULL WHERE lease_token = ANY($1::text[]) AND state = 'pending'`);
const RELEASE = named('release', 'UPDATE pending_deliveries SET next_attempt_at = $1, lease_token = NULL WHERE id = $2 AND lease_token = $3');
const SAVE_RENDERED_BODY = named('save_rendered_body', `
  UPDATE pending_deliveries SET body = $1, content_type = $2, updated_at = $3 WHERE id = $4 AND lease_token = $5 AND state = 'pending'`);
// Rows waiting behind their key's head are not due: an idle worker must not wake for them.
const NEXT_DUE = named('next_due', `
  SELECT d.next_attempt_at AS due FROM pending_deliveries d WHERE d.state = 'pending' AND ${HEAD_OF_KEY('$1')} ORDER BY d.next_attempt_at LIMIT 1`);
/** A retried delivery joins the back of its key (join-back.ts). */
const RETRY = named('retry', `
  WITH ${moveDeliveries({
    name: 'retried', from: HISTORY, using: '(SELECT $3::bigint AS id) r', where: 'd.id = r.id',
    set: {
      state: "'pending'", next_attempt_at: '$1::bigint', lease_token: 'NULL::text', dead_reason: 'NULL::text', blocked_since: 'NULL::bigint',
      updated_at: '$2::bigint', order_seq: NEXT_ORDER_SEQ.replaceAll('order_key', 'd.order_key'),
    },
  })}
  SELECT id FROM retried_in`);
/** Renewal uses the database's clock, as the lease's end was set by it. */
const RENEW = named('renew', `
  UPDATE pending_deliveries SET next_attempt_at = (extract(epoch FROM clock_timestamp()) * 1000)::bigint + $1
  WHERE id = $2 AND lease_token = $3 AND state = 'pending'`);
const BLOCKED_HEAD = `FROM pending_deliveries d WHERE d.state = 'pending' AND d.order_key IS NOT NULL AND d.blocked_since IS NOT NULL AND ${HEAD_OF_KEY('$1')}`;
const BLOCKED_KEYS = named('blocked_keys', `
  SELECT d.order_key, d.id, d.event_id, d.attempts, d.blocked_since, d.next_attempt_at, d.last_status, d.last_error,
    (SELECT count(*) FROM pending_deliveries w WHERE w.state = 'pending' AND w.order_key IS NOT NULL AND w.rule_id = d.rule_id AND w.order_key = d.order_key)::int - 1 AS waiting
  ${BLOCKED_HEAD} AND d.rule_id = $2 ORDER BY d.blocked_since, d.id LIMIT $3`);
const BLOCKED_COUNTS = named('blocked_counts', `SELECT d.rule_id, count(*)::int AS n ${BLOCKED_HEAD} GROUP BY d.rule_id`);
const STATS = named('stats', `
  SELECT
    (SELECT count(*) FROM pending_deliveries WHERE state = 'pending') AS pending,
    (SELECT count(*) FROM pending_deliveries WHERE state = 'pending' AND next_attempt_at <= $1) AS due,
    (SELECT count(*) FROM delivery_history WHERE state = 'dead') AS dead,
    (SELECT min(next_attempt_at) FROM pending_deliveries WHERE state = 'pending' AND next_attempt_at <= $1) AS oldest`);

/** The outbox's SQL. Due times cross the interface in the node's clock and are stored in the database's. */
export class OutboxQueries {
  /** Lease tokens of claims that failed without an answer: their commit may have gone through all the same. */
  private readonly unanswered = new Set<string>();

  constructor(
    private readonly db: pg.Pool,
    private readonly clock: ClockOffset,
  ) {}

  private toDelivery(row: DeliveryRow): Delivery {
    const delivery = toDelivery(row);
    return row.next_attempt_at === null ? delivery : { ...delivery, nextAttemptAt: this.clock.toNode(row.next_attempt_at) };
  }

  /** Outbox rows for stored events (replay), in one statement; returns their ids in order. */
  async insert(db: pg.Pool | pg.PoolClient, rows: readonly { eventId: number; delivery: NewDelivery }[], origin: DeliveryOrigin, now: number): Promise<number[]> {
    if (rows.length === 0) return [];
    const columns: unknown[][] = Array.from({ length: 8 }, () => []);
    for (const { eventId, delivery: d } of rows) {
      [eventId, d.ruleId, d.ruleSetHash, d.body, d.contentType, d.delayMs ?? 0, d.deadReason ?? null, d.orderKey ?? null].forEach((value, i) => columns[i]!.push(value));
    }
    const orderKeys = columns.pop()!;
    const result = await db.query<{ id: number }>({ ...INSERT_DELIVERIES, values: [...columns, origin, this.clock.toDatabase(now), now, orderKeys] });
    return result.rows.map((r) => r.id);
  }

  /**
   * A claim that fails without an answer (its connection was cut) may still have committed, leaving rows
   * leased that no worker holds: the next claim first gives them back, instead of their waiting out the lease.
   */
  async claim(now: number, limit: number, leaseMs: number): Promise<ClaimedDelivery[]> {
    const dbNow = this.clock.toDatabase(now);
    if (this.unanswered.size > 0) {
      const tokens = [...this.unanswered];
      await this.db.query({ ...RELEASE_UNANSWERED, values: [tokens, dbNow] });
      for (const token of tokens) this.unanswered.delete(token);
    }
    const leaseToken = randomUUID();
    let rows: { id: number; event_id: number; rule_id: string; rule_set_hash: string; content_type: string; attempts: number; pass_offset: number; order_key: string | null; blocked_since: number | null; last_error: string | null; payload: Buffer; has_body: boolean }[];
    try {
      ({ rows } = await this.db.query({ ...CLAIM, values: [dbNow, limit, dbNow + leaseMs, leaseToken, now] }));
    } catch (err) {
      this.unanswered.add(leaseToken);
      throw err;
    }
    return rows
      .map((r) => ({
        id: r.id, eventId: r.event_id, ruleId: r.rule_id, ruleSetHash: r.rule_set_hash, contentType: r.content_type, attempts: r.attempts, passOffset: r.pass_offset, leaseToken,
        orderKey: r.order_key, blockedSince: r.blocked_since, lastError: r.last_error, payload: r.payload, hasBody: r.has_body,
      }))
      .sort((a, b) => a.id - b.id);
  }

  async recordAttempts(records: readonly AttemptToRecord[], now: number): Promise<boolean[]> {
    const columns: unknown[][] = Array.from({ length: 15 }, () => []);
    const retryableDeadAt: (string | null)[] = [];
    const blockedSince: (number | null)[] = [];
    const passOffsetSteps: number[] = [];
    for (const record of records) {
      const { deliveryId, leaseToken, attempt: a } = record;
      const after = deliveryAfterAttempt(record);
      retryableDeadAt.push(after.retryableDeadDestination);
      blockedSince.push(after.blockedSince);
      passOffsetSteps.push(after.passOffsetStep);
      [
        deliveryId, leaseToken, a.attempt, a.startedAt, a.durationMs, a.urlOrigin, a.status, a.errorCode, a.errorMessage, a.responseExcerpt, a.outcome,
        after.state, after.nextAttemptAt === null ? null : this.clock.toDatabase(after.nextAttemptAt), after.lastError, after.deadReason,
      ].forEach((value, i) => columns[i]!.push(value));
    }
    const { rows } = await this.db.query<{ id: number }>({ ...RECORD_ATTEMPTS, values: [...columns, now, retryableDeadAt, blockedSince, passOffsetSteps] });
    const resolved = new Set(rows.map((r) => r.id));
    return records.map((r) => resolved.has(r.deliveryId));
  }

  /** Keeps a claimed delivery's rendered body; false when the lease is no longer this token's. */
  async saveRenderedBody(deliveryId: number, leaseToken: string, rendered: { body: Buffer; contentType: string }, now: number): Promise<boolean> {
    return (await this.db.query({ ...SAVE_RENDERED_BODY, values: [rendered.body, rendered.contentType, now, deliveryId, leaseToken] })).rowCount === 1;
  }

  async release(deliveryId: number, leaseToken: string, nextAttemptAt: number): Promise<void> {
    await this.db.query({ ...RELEASE, values: [this.clock.toDatabase(nextAttemptAt), deliveryId, leaseToken] });
  }

  async nextDueAt(now: number): Promise<number | null> {
    const due = (await this.db.query<{ due: number | null }>({ ...NEXT_DUE, values: [this.clock.toDatabase(now)] })).rows[0]?.due ?? null;
    return due === null ? null : this.clock.toNode(due);
  }

  async renewLease(deliveryId: number, leaseToken: string, leaseMs: number): Promise<boolean> {
    return (await this.db.query({ ...RENEW, values: [leaseMs, deliveryId, leaseToken] })).rowCount === 1;
  }

  async blockedKeys(ruleId: string, limit: number, now: number): Promise<BlockedKey[]> {
    const { rows } = await this.db.query<BlockedHeadRow>({ ...BLOCKED_KEYS, values: [this.clock.toDatabase(now), ruleId, limit] });
    return rows.map((row) => toBlockedKey({ ...row, next_attempt_at: row.next_attempt_at === null ? null : this.clock.toNode(row.next_attempt_at) }));
  }

  async blockedKeyCounts(now: number): Promise<Map<string, number>> {
    const { rows } = await this.db.query<{ rule_id: string; n: number }>({ ...BLOCKED_COUNTS, values: [this.clock.toDatabase(now)] });
    return new Map(rows.map((row) => [row.rule_id, row.n]));
  }

  async get(id: number): Promise<Omit<DeliveryDetail, 'redrives'> | null> {
    const { rows } = await this.db.query<DeliveryRow>(`SELECT ${DELIVERY_COLUMNS} FROM deliveries WHERE id = $1`, [id]);
    if (rows.length === 0) return null;
    const attempts = await this.db.query<Record<string, unknown>>('SELECT * FROM delivery_attempts WHERE delivery_id = $1 ORDER BY id', [id]);
    const attemptLog = attempts.rows.map(toStoredAttempt);
    return { ...this.toDelivery(rows[0]!), attemptLog };
  }

  async list(filter: DeliveryFilter, page: { limit: number; before?: number }): Promise<Page<Delivery>> {
    const params = new SqlParams();
    const where: string[] = [];
    if (filter.state) where.push(`state = ${params.add(filter.state)}`);
    if (filter.ruleId) where.push(`rule_id = ${params.add(filter.ruleId)}`);
    if (filter.eventId !== undefined) where.push(`event_id = ${params.add(filter.eventId)}`);
    if (page.before !== undefined) where.push(`id < ${params.add(page.before)}`);
    const { rows } = await this.db.query<DeliveryRow>(
      `SELECT ${DELIVERY_COLUMNS} FROM deliveries ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY id DESC LIMIT ${params.add(page.limit + 1)}`,
      params.values,
    );
    const items = rows.slice(0, page.limit).map((row) => this.toDelivery(row));
    return { items, nextCursor: rows.length > page.limit ? items.at(-1)!.id : null };
  }

  async retryNow(id: number, now: number): Promise<boolean> {
    return (await this.db.query({ ...RETRY, values: [this.clock.toDatabase(now), now, id] })).rowCount === 1;
  }

  async stats(now: number): Promise<OutboxStats> {
    const dbNow = this.clock.toDatabase(now);
    const row = (await this.db.query<{ pending: number; due: number; dead: number; oldest: number | null }>({ ...STATS, values: [dbNow] })).rows[0]!;
    return { pending: row.pending, due: row.due, dead: row.dead, oldestDueAgeMs: row.oldest === null ? 0 : dbNow - row.oldest };
  }
}
