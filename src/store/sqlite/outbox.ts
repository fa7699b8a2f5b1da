import { randomUUID } from 'node:crypto';
import type { BetterSqlite3 } from '../../sqlite-driver.js';
import type { ClaimedDelivery } from '../delivery-queue.js';
import type { Delivery, DeliveryDetail, DeliveryFilter, DeliveryOrigin, NewDelivery, OutboxStats, Page } from '../outbox-store.js';
import { deliveryAfterAttempt, type AttemptToRecord } from '../attempt-to-record.js';
import { joinBackOfKeys } from '../join-back.js';
import { DELIVERY_COLUMNS, toDelivery, toStoredAttempt, type BlockedHeadRow, type DeliveryRow } from '../stored-rows.js';

/**
 * Whether a pending row of an ordered rule may be attempted now: no earlier row of its (rule, key) is
 * pending, and no other row of the key holds a live lease (parameter: now). Unordered rows always may.
 * The inner query repeats the partial index's condition word for word so SQLite uses it.
 */
const HEAD_OF_KEY_SQL = `(d.order_key IS NULL OR NOT EXISTS (
    SELECT 1 FROM deliveries p WHERE p.state = 'pending' AND p.order_key IS NOT NULL
      AND p.rule_id = d.rule_id AND p.order_key = d.order_key AND p.id <> d.id
      AND (p.order_seq < d.order_seq OR (p.lease_token IS NOT NULL AND p.next_attempt_at > ?))))`;

/**
 * The ids of due pending deliveries that head their key, oldest due first (parameters: now, now, limit).
 * INDEXED BY: the partial due-index makes a claim cost its batch, not the backlog; the planner would
 * otherwise pick a (state, ...) index and sort every pending row on each claim.
 */
export const DUE_DELIVERY_IDS_SQL = `SELECT d.id FROM deliveries d INDEXED BY deliveries_due
  WHERE d.state = 'pending' AND d.next_attempt_at <= ? AND ${HEAD_OF_KEY_SQL} ORDER BY d.next_attempt_at LIMIT ?`;

/** The next sequence number of a key: after every pending row of it (parameters: rule id, key, own id or 0). */
const NEXT_ORDER_SEQ_SQL = `(SELECT coalesce(max(p.order_seq), 0) + 1 FROM deliveries p
  WHERE p.state = 'pending' AND p.order_key IS NOT NULL AND p.rule_id = ? AND p.order_key = ? AND p.id <> ?)`;

/** A claimed row as `claimRows` returns it: id, event_id, rule_id, rule_set_hash, content_type, attempts, order_key, blocked_since, payload, pass_offset, has_body, last_error. */
type ClaimRow = [number, number, string, string, string, number, string | null, number | null, Buffer, number, number, string | null];

/** The outbox's SQL, synchronous; the store decides which transaction each call runs in. */
export class OutboxQueries {
  private readonly insert;
  private readonly insertOrdered;
  private readonly renumber;
  private readonly renew;
  private readonly blockedHeads;
  private readonly blockedCounts;
  private readonly claimRows;
  private readonly insertAttempt;
  private readonly resolve;
  private readonly release;
  private readonly saveBody;
  private readonly nextDue;
  private readonly byId;
  private readonly attemptsOf;
  private readonly retry;

  constructor(private readonly db: BetterSqlite3.Database) {
    // No RETURNING: run() reports the new rowid anyway, and RETURNING costs more per row.
    this.insert = db.prepare(`
      INSERT INTO deliveries (event_id, rule_id, rule_set_hash, origin, state, body, content_type, next_attempt_at, dead_reason, created_at, updated_at)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
    // Single writer: the next sequence number read here cannot be taken by another transaction meanwhile.
    this.insertOrdered = db.prepare(`
      INSERT INTO deliveries (event_id, rule_id, rule_set_hash, origin, state, body, content_type, next_attempt_at, dead_reason, created_at, updated_at,
                              order_key, order_seq)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ${NEXT_ORDER_SEQ_SQL})`);
    // The back place of a pending ordered row's key: after every other pending row of it.
    this.renumber = db.prepare(`
      UPDATE deliveries SET order_seq = (SELECT coalesce(max(p.order_seq), 0) + 1 FROM deliveries p
        WHERE p.state = 'pending' AND p.order_key IS NOT NULL AND p.rule_id = deliveries.rule_id AND p.order_key = deliveries.order_key AND p.id <> deliveries.id)
      WHERE id = ? AND state = 'pending' AND order_key IS NOT NULL`);
    this.renew = db.prepare("UPDATE deliveries SET next_attempt_at = ? WHERE id = ? AND lease_token = ? AND state = 'pending'");
    const blockedHead = `FROM deliveries d INDEXED BY deliveries_order_pending
      WHERE d.state = 'pending' AND d.order_key IS NOT NULL AND d.blocked_since IS NOT NULL`;
    this.blockedHeads = db.prepare<[number, string, number], BlockedHeadRow>(`
      SELECT d.order_key, d.id, d.event_id, d.attempts, d.blocked_since, d.next_attempt_at, d.last_status, d.last_error,
        (SELECT count(*) FROM deliveries w WHERE w.state = 'pending' AND w.order_key IS NOT NULL AND w.rule_id = d.rule_id AND w.order_key = d.order_key) - 1 AS waiting
      ${blockedHead} AND ${HEAD_OF_KEY_SQL} AND d.rule_id = ? ORDER BY d.blocked_since, d.id LIMIT ?`);
    this.blockedCounts = db.prepare<[number], { rule_id: string; n: number }>(`SELECT d.rule_id, count(*) AS n ${blockedHead} AND ${HEAD_OF_KEY_SQL} GROUP BY d.rule_id`);
    // Claiming moves next_attempt_at to the lease end: a crashed worker's rows fall due again by themselves.
    // One statement returns what an attempt needs, payload included, as arrays (`raw`): no per-row object
    // with named keys to build on the worker's hot path.
    this.claimRows = db.prepare<unknown[], ClaimRow>(`
      UPDATE deliveries SET next_attempt_at = ?, lease_token = ?, updated_at = ?
      WHERE id IN (${DUE_DELIVERY_IDS_SQL})
      RETURNING id, event_id, rule_id, rule_set_hash, content_type, attempts, order_key, blocked_since,
        COALESCE(body, (SELECT e.body FROM events e WHERE e.id = deliveries.event_id)), pass_offset, body IS NOT NULL, last_error`).raw() as unknown as BetterSqlite3.Statement<unknown[], ClaimRow>;
    this.insertAttempt = db.prepare(`
      INSERT INTO delivery_attempts (delivery_id, attempt, started_at, duration_ms, url_origin, status, error_code, error_message, response_excerpt, outcome)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
    this.resolve = db.prepare(`
      UPDATE deliveries SET state = ?, attempts = ?, next_attempt_at = ?, lease_token = NULL, last_status = ?, last_error = ?,
        dead_reason = ?, retryable_dead_destination = ?, updated_at = ?, blocked_since = CASE WHEN ? = 'pending' THEN coalesce(blocked_since, ?) END,
        pass_offset = pass_offset + ?
      WHERE id = ? AND lease_token = ?`);
    this.release = db.prepare('UPDATE deliveries SET next_attempt_at = ?, lease_token = NULL WHERE id = ? AND lease_token = ?');
    this.saveBody = db.prepare("UPDATE deliveries SET body = ?, content_type = ?, updated_at = ? WHERE id = ? AND lease_token = ? AND state = 'pending'");
    // Rows waiting behind their key's head are not due: an idle worker must not wake for them.
    this.nextDue = db.prepare<[number], { due: number | null }>(`SELECT d.next_attempt_at AS due FROM deliveries d INDEXED BY deliveries_due
      WHERE d.state = 'pending' AND ${HEAD_OF_KEY_SQL} ORDER BY d.next_attempt_at LIMIT 1`);
    this.byId = db.prepare<[number], DeliveryRow>(`SELECT ${DELIVERY_COLUMNS} FROM deliveries WHERE id = ?`);
    this.attemptsOf = db.prepare<[number], Record<string, unknown>>('SELECT * FROM delivery_attempts WHERE delivery_id = ? ORDER BY id');
    this.retry = db.prepare(`
      UPDATE deliveries SET state = 'pending', next_attempt_at = ?, lease_token = NULL, dead_reason = NULL, blocked_since = NULL, updated_at = ?
      WHERE id = ? AND state != 'pending'`);
  }

  insertDeliveries(eventId: number, deliveries: readonly NewDelivery[], origin: DeliveryOrigin, now: number): number[] {
    return deliveries.map((d) => {
      const dead = d.deadReason !== undefined;
      const values = [eventId, d.ruleId, d.ruleSetHash, origin, dead ? 'dead' : 'pending', d.body, d.contentType, dead ? null : now + (d.delayMs ?? 0), d.deadReason ?? null, now, now];
      const inserted = d.orderKey === undefined ? this.insert.run(...values) : this.insertOrdered.run(...values, d.orderKey, d.ruleId, d.orderKey, 0);
      return Number(inserted.lastInsertRowid);
    });
  }

  claim(now: number, limit: number, leaseMs: number): ClaimedDelivery[] {
    const leaseToken = randomUUID();
    return this.claimRows.all(now + leaseMs, leaseToken, now, now, now, limit).map(
      ([id, eventId, ruleId, ruleSetHash, contentType, attempts, orderKey, blockedSince, payload, passOffset, hasBody, lastError]) => ({
        id, eventId, ruleId, ruleSetHash, contentType, attempts, passOffset, leaseToken, orderKey, blockedSince, lastError, payload, hasBody: hasBody === 1,
      }),
    );
  }

  recordAttempts(records: readonly AttemptToRecord[], now: number): boolean[] {
    return records.map((record) => {
      const { deliveryId, leaseToken, attempt: a } = record;
      // The attempt happened whatever the lease says, so it is always recorded.
      this.insertAttempt.run(deliveryId, a.attempt, a.startedAt, a.durationMs, a.urlOrigin, a.status, a.errorCode, a.errorMessage, a.responseExcerpt, a.outcome);
      const after = deliveryAfterAttempt(record);
      const result = this.resolve.run(
        after.state, after.attempts, after.nextAttemptAt, after.lastStatus, after.lastError, after.deadReason, after.retryableDeadDestination,
        now, after.state, after.blockedSince, after.passOffsetStep, deliveryId, leaseToken,
      );
      return result.changes === 1;
    });
  }

  /** Keeps a claimed delivery's rendered body; false when the lease is no longer this token's. */
  saveRenderedBody(deliveryId: number, leaseToken: string, rendered: { body: Buffer; contentType: string }, now: number): boolean {
    return this.saveBody.run(rendered.body, rendered.contentType, now, deliveryId, leaseToken).changes === 1;
  }

  releaseClaim(deliveryId: number, leaseToken: string, nextAttemptAt: number): void {
    this.release.run(nextAttemptAt, deliveryId, leaseToken);
  }

  nextDueAt(now: number): number | null {
    return this.nextDue.get(now)?.due ?? null;
  }

  /** Moves a live lease's end to `leaseEnd`; false when the lease is no longer this token's. */
  renewLease(deliveryId: number, leaseToken: string, leaseEnd: number): boolean {
    return this.renew.run(leaseEnd, deliveryId, leaseToken).changes === 1;
  }

  /** Gives the pending rows among `ids` that carry an order key the back place of their key (`join-back.ts`). */
  joinBackOfKeys(ids: readonly number[]): void {
    joinBackOfKeys(ids, (id) => this.renumber.run(id));
  }

  blockedKeys(ruleId: string, limit: number, now: number): BlockedHeadRow[] {
    return this.blockedHeads.all(now, ruleId, limit);
  }

  blockedKeyCounts(now: number): Map<string, number> {
    return new Map(this.blockedCounts.all(now).map((row) => [row.rule_id, row.n]));
  }

  get(id: number): Omit<DeliveryDetail, 'redrives'> | null {
    const row = this.byId.get(id);
    if (!row) return null;
    const attemptLog = this.attemptsOf.all(id).map(toStoredAttempt);
    return { ...toDelivery(row), attemptLog };
  }

  list(filter: DeliveryFilter, page: { limit: number; before?: number }): Page<Delivery> {
    const where: string[] = [];
    const params: unknown[] = [];
    // Dead letters newest first come from their own partial index (deliveries_dead_id or _rule, migration 006,
    // which the literal condition lets SQLite use). Pending and delivered rows are most of the recent ones:
    // the bound value keeps the page a newest-first walk rather than a sort of every pending row.
    if (filter.state === 'dead') where.push("state = 'dead'");
    else if (filter.state) { where.push('state = ?'); params.push(filter.state); }
    if (filter.ruleId) { where.push('rule_id = ?'); params.push(filter.ruleId); }
    if (filter.eventId !== undefined) { where.push('event_id = ?'); params.push(filter.eventId); }
    if (page.before !== undefined) { where.push('id < ?'); params.push(page.before); }
    const rows = this.db
      .prepare<unknown[], DeliveryRow>(`SELECT ${DELIVERY_COLUMNS} FROM deliveries ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY id DESC LIMIT ?`)
      .all(...params, page.limit + 1);
    const items = rows.slice(0, page.limit).map(toDelivery);
    return { items, nextCursor: rows.length > page.limit ? items.at(-1)!.id : null };
  }

  /** Runs inside a transaction (two statements): the retried delivery joins the back of its key. */
  retryNow(id: number, now: number): boolean {
    const retried = this.retry.run(now, now, id).changes === 1;
    if (retried) this.joinBackOfKeys([id]);
    return retried;
  }

  stats(now: number): OutboxStats {
    const row = this.db.prepare<[number, number], { pending: number; due: number; dead: number; oldest: number | null }>(`
      SELECT
        (SELECT count(*) FROM deliveries INDEXED BY deliveries_due WHERE state = 'pending') AS pending,
        (SELECT count(*) FROM deliveries INDEXED BY deliveries_due WHERE state = 'pending' AND next_attempt_at <= ?) AS due,
        (SELECT count(*) FROM deliveries WHERE state = 'dead') AS dead,
        (SELECT min(next_attempt_at) FROM deliveries INDEXED BY deliveries_due WHERE state = 'pending' AND next_attempt_at <= ?) AS oldest`).get(now, now)!;
    return { pending: row.pending, due: row.due, dead: row.dead, oldestDueAgeMs: row.oldest === null ? 0 : now - row.oldest };
  }
}
