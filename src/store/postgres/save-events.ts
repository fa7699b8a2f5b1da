import type pg from 'pg';
import { MAX_RECEIVED_COUNT, type NewEvent, type SaveEventResult } from '../event-store.js';
import type { NewDelivery } from '../outbox-store.js';
import { eventText } from '../storable-text.js';
import { issuesText } from '../quarantine-columns.js';
import { seenKey, seenKeyText } from '../seen-key.js';
import { NEXT_ORDER_SEQ } from './order-seq.js';
import { named, withDeadline } from './sql-params.js';
import { insertDeliveries, NEW_DELIVERY_COLUMNS } from './delivery-tables.js';

/**
 * One statement stores a whole group commit: the events (a repeat only bumps its counter and date), and the
 * outbox rows of the events that are new. A single statement is its own transaction: one round trip and one
 * commit per batch. The ledger of seen keys decides which copy is first: a key it holds is a repeat (of a
 * stored event, whose counter goes up, or of one retention removed, answered without storing anything).
 * The trigger on events records the keys of the new rows (migration 012): when two nodes insert copies of one
 * transfer at the same instant, the second waits for the first's commit on the ledger's key and fails
 * (unique_violation on seen_keys_pkey); tried again (isRetryable), its copy is found as a repeat.
 * An event is written to the partition of its receipt time (written_at, migration 013), its deliveries too.
 */
const SAVE_EVENTS = named('save_events', `
  WITH input AS (
    SELECT * FROM unnest($1::int[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[],
                         $9::bigint[], $10::bigint[], $11::int[], $12::text[], $13::bytea[], $14::text[], $24::float8[],
                         $25::text[], $26::text[], $27::uuid[])
      AS i(ord, source, event, transfer_id, checkout_id, email, wallet_address, validation, received_at, last_received_at, copies, headers, body,
           rule_set_hash, total_price_usd, issues, quarantine, seen_key)
  ), known AS (
    -- The key is computed here (seen-key.ts), as hookrelay_seen_key would: a hash in SQL costs several times more.
    SELECT i.ord, k.event_id FROM input i JOIN seen_keys k ON k.key = i.seen_key
    UNION ALL
    -- An event stored before the ledger whose key retention has not put in it yet (the legacy partition:
    -- nothing to read once it is gone).
    SELECT i.ord, e.id FROM input i JOIN events e
      ON e.written_at = 0 AND e.transfer_id = i.transfer_id AND e.source = i.source AND e.event = i.event AND e.edit_number = 0
    WHERE NOT EXISTS (SELECT 1 FROM seen_keys k WHERE k.key = i.seen_key)
  ), repeated AS (
    -- A received event has edit number 0: only the original of a transfer can be repeated, never an edited copy.
    -- The count stops at the largest integer instead of failing every later repeat.
    UPDATE events e SET received_count = least(e.received_count::bigint + i.copies, ${MAX_RECEIVED_COUNT})::int,
                        last_received_at = i.last_received_at
    FROM known k JOIN input i ON i.ord = k.ord WHERE e.id = k.event_id
    RETURNING k.ord, e.id, e.received_count
  ), saved AS (
    INSERT INTO events AS e (source, event, transfer_id, checkout_id, email, wallet_address, validation, received_at, last_received_at,
                             received_count, headers, body, rule_set_hash, total_price_usd, issues, quarantine, written_at)
    SELECT source, event, transfer_id, checkout_id, email, wallet_address, validation, received_at, last_received_at, copies, headers, body,
           rule_set_hash, total_price_usd, issues, quarantine, received_at
    FROM input WHERE ord NOT IN (SELECT ord FROM known) ORDER BY ord
    RETURNING e.id, e.transfer_id, e.source, e.event, e.received_count, e.written_at
  ), ${insertDeliveries('planned', `
    SELECT s.id AS event_id, d.rule_id, d.rule_set_hash, 'ingest' AS origin, CASE WHEN d.dead_reason IS NULL THEN 'pending' ELSE 'dead' END AS state,
           d.body, d.content_type, d.next_attempt_at, d.dead_reason, i.received_at AS created_at, i.received_at AS updated_at, d.order_key,
           ${NEXT_ORDER_SEQ.replaceAll('order_key', 'd.order_key')} AS order_seq, s.written_at
    FROM unnest($15::int[], $16::int[], $17::text[], $18::text[], $19::bytea[], $20::text[], $21::bigint[], $22::text[], $23::text[])
      AS d(ord, seq, rule_id, rule_set_hash, body, content_type, next_attempt_at, dead_reason, order_key)
    JOIN input i ON i.ord = d.ord
    JOIN saved s ON s.transfer_id = i.transfer_id AND s.source = i.source AND s.event = i.event
    ORDER BY d.ord, d.seq`, NEW_DELIVERY_COLUMNS)}
  -- Each answer is matched to its input row here, by the key as the database compares it.
  SELECT i.ord, s.id, s.received_count, true AS inserted FROM saved s JOIN input i ON s.transfer_id = i.transfer_id AND s.source = i.source AND s.event = i.event
  UNION ALL SELECT ord, id, received_count, false FROM repeated
  UNION ALL SELECT ord, event_id, NULL, false FROM known WHERE ord NOT IN (SELECT ord FROM repeated)`);

interface SavedRow {
  ord: number;
  id: number;
  /** Null for a key whose event retention removed. */
  received_count: number | null;
  inserted: boolean;
}

const keyOf = (e: { transferId: string; source: string; event: string }): string => `${e.transferId}\u0000${e.source}\u0000${e.event}`;

/**
 * Stores `events` in one statement and returns each one's result in order. Copies of one transfer in the
 * same batch become one row (the first copy's bytes, counted once per copy, dated by the last); rows go in
 * key order, so two nodes' batches lock shared keys in the same order and cannot deadlock on them.
 * `dueAt(receivedAt, delayMs)` gives a delivery's first due time in the database clock. Without an answer
 * within `timeoutMs` the statement is given up on ("Query read timeout") and its connection thrown away.
 */
export async function saveEvents(
  db: pg.Pool,
  events: readonly NewEvent[],
  dueAt: (receivedAt: number, delayMs: number) => number,
  timeoutMs?: number,
): Promise<SaveEventResult[]> {
  const groups = new Map<string, { first: NewEvent; copies: number; lastReceivedAt: number }>();
  for (const e of events) {
    const key = keyOf(e);
    const group = groups.get(key);
    if (group) {
      group.copies += 1;
      group.lastReceivedAt = e.receivedAt;
    } else groups.set(key, { first: e, copies: 1, lastReceivedAt: e.receivedAt });
  }
  const ordered = [...groups.values()].sort((a, b) => compareKeys(keyOf(a.first), keyOf(b.first)));
  const columns: unknown[][] = Array.from({ length: 27 }, () => []);
  ordered.forEach(({ first: e, copies, lastReceivedAt }, ord) => {
    const values = [ord, eventText(e.source), eventText(e.event), eventText(e.transferId), eventText(e.checkoutId), eventText(e.email), eventText(e.walletAddress), e.validation, e.receivedAt, lastReceivedAt, copies, JSON.stringify(e.headers), e.body, e.ruleSetHash ?? null];
    values.forEach((value, i) => columns[i]!.push(value));
    (e.deliveries ?? []).forEach((d: NewDelivery, seq) => {
      const dead = d.deadReason !== undefined;
      const row = [ord, seq, d.ruleId, d.ruleSetHash, d.body, d.contentType, dead ? null : dueAt(e.receivedAt, d.delayMs ?? 0), d.deadReason ?? null, d.orderKey ?? null];
      row.forEach((value, i) => columns[14 + i]!.push(value));
    });
    // The amount, what a check found, the quarantine state and the seen key come last ($24-$27): the delivery
    // columns keep their numbers.
    columns[23]!.push(e.totalPriceUsd ?? null);
    // What a check found ($25) and whether the event is held in quarantine ($26): null for nearly every event.
    columns[24]!.push(issuesText(e.issues));
    columns[25]!.push(e.held ? 'held' : null);
    columns[26]!.push(seenKeyText(seenKey(e.source, e.event, e.transferId, 0)));
  });
  const { rows } = await db.query<SavedRow>(withDeadline({ ...SAVE_EVENTS, values: columns }, timeoutMs));
  const saved = new Map<NewEvent, SavedRow>(rows.map((row) => [ordered[row.ord]!.first, row]));
  // Copies answered in the order they were submitted: the first of a new event is the original.
  const seen = new Map<string, number>();
  return events.map((e) => {
    const key = keyOf(e);
    const group = groups.get(key)!;
    const row = saved.get(group.first);
    // Every input row is inserted or updated, so each has its answer. Were one missing, the items would be
    // tried again one by one and answered as repeats: never an error for an event that is stored.
    if (!row) throw new Error('an event of the batch has no answer from the database');
    const index = seen.get(key) ?? 0;
    seen.set(key, index + 1);
    if (row.received_count === null) return { id: row.id, duplicate: true, receivedCount: null };
    const receivedCount = Math.max(1, row.received_count - group.copies + index + 1);
    return { id: row.id, duplicate: !(row.inserted && index === 0), receivedCount };
  });
}

function compareKeys(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
