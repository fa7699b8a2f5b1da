import type pg from 'pg';
import type { ImportedEvent, ImportResult } from '../event-archive.js';
import { MAX_RECEIVED_COUNT, type EventPosition, type EventSearch, type EventPage, type EventSelection, type StoredEvent, type EventBody } from '../event-store.js';
import { quarantineValues } from '../quarantine-columns.js';
import { SUMMARY_COLUMNS, toEventSummary, toStoredEvent, type EventRow } from '../sqlite/event-rows.js';
import { eventSelectionSql } from './event-filter-sql.js';
import { eventText, readEventBody, readEventRow } from '../storable-text.js';
import { named, namedByShape, SqlParams } from './sql-params.js';
import type { SeenKeyRecord } from '../seen-keys-store.js';
import { isLegacy, type TimePartition } from './partitions.js';

/** Filters with an index of their own on every partition, used by a search by that column alone whatever the value. */
const ONE_PLAN_FILTERS = new Set<keyof EventSearch>(['checkoutId', 'email', 'walletAddress', 'transferId']);
const GET_EVENT = named('get_event', 'SELECT * FROM events WHERE id = $1');
const GET_EVENT_HEADERS = named('get_event_headers', 'SELECT headers FROM events WHERE id = $1');

const IMPORT_EVENT = named('import_event', `
  INSERT INTO events (source, event, transfer_id, checkout_id, email, wallet_address, validation, received_at, last_received_at, received_count,
                      headers, body, imported_at, rule_set_hash, edit_number, edited_from, edited_at, edited_via, total_price_usd,
                      issues, quarantine, released_at, released_by, release_forced, written_at)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24, greatest($13::bigint, $8::bigint))
  RETURNING id`);

const NOT_PENDING = 'NOT EXISTS (SELECT 1 FROM pending_deliveries d WHERE d.event_id = e.id)';

/**
 * Retention deletes in small batches (the legacy partition, and what count-based retention cannot drop as
 * whole partitions); SKIP LOCKED lets two nodes pruning at once share the work instead of waiting on each
 * other's rows. Deleting an event deletes its deliveries, attempts and redrives in the same statement.
 */
const pruneOlderThan = (table: string): string => deleteKeepingKeys(`
    SELECT e.id, e.written_at FROM ${table} e
    WHERE e.received_at < $1 AND (e.imported_at IS NULL OR e.imported_at < $1) AND ${NOT_PENDING}
    ORDER BY e.received_at, e.id LIMIT $2 FOR UPDATE SKIP LOCKED`);
const PRUNE_OLDER_THAN = named('prune_older_than', pruneOlderThan('events'));
/**
 * The same in one partition, for the events out of its range only: those moved out of a dropped partition,
 * stored before the range begins (`before` is then the age limit or the range's start, whichever is earlier),
 * or any in the legacy one. An event in place was received or imported within its range, so the partition's
 * received_at index reads only the few out of place, never its events older than the limit. The partition is
 * named, not selected by written_at: a condition on it would let the planner walk the primary key instead.
 */
const outOfPlaceDeletion = (range: TimePartition, before: number, limit: number): pg.QueryConfig => ({ text: pruneOlderThan(`events_${range.suffix}`), values: [before, limit] });
const PRUNE_OLDEST = named('prune_oldest', deleteKeepingKeys(`
    SELECT e.id, e.written_at FROM events e WHERE ${NOT_PENDING} ORDER BY e.received_at, e.id LIMIT $1 FOR UPDATE SKIP LOCKED`));

/**
 * Deletes the events `doomed` selects, and in the same statement puts their keys in the ledger of seen keys
 * (an event stored before the ledger existed is not there yet): a repeat of one stays a duplicate.
 */
function deleteKeepingKeys(doomed: string): string {
  return `
    WITH doomed AS (${doomed}),
    kept AS (
      INSERT INTO seen_keys (key, event_id, seen_at)
      SELECT hookrelay_seen_key(e.source, e.event, e.transfer_id, e.edit_number), e.id, coalesce(e.imported_at, e.received_at)
      FROM events e JOIN doomed d ON d.id = e.id AND d.written_at = e.written_at
      ON CONFLICT (key) DO NOTHING),
    gone_pending AS (
      DELETE FROM pending_deliveries d USING doomed x WHERE d.event_id = x.id RETURNING d.id, d.written_at),
    gone_settled AS (
      DELETE FROM delivery_history d USING doomed x WHERE d.event_id = x.id AND d.written_at = x.written_at RETURNING d.id, d.written_at),
    gone_deliveries AS (SELECT * FROM gone_pending UNION ALL SELECT * FROM gone_settled),
    gone_attempts AS (
      DELETE FROM delivery_attempts a USING gone_deliveries g WHERE a.delivery_id = g.id AND a.written_at = g.written_at),
    gone_redrives AS (
      DELETE FROM delivery_redrives r USING gone_deliveries g WHERE r.delivery_id = g.id)
    DELETE FROM events e USING doomed x WHERE e.id = x.id AND e.written_at = x.written_at`;
}

/** The ledger's row of a key, and whether its event is still stored. */
const FIND_SEEN = named('find_seen', `
  SELECT k.event_id, EXISTS (SELECT 1 FROM events e WHERE e.id = k.event_id) AS stored
  FROM seen_keys k WHERE k.key = hookrelay_seen_key($1, $2, $3, $4)
  UNION ALL -- an event stored before the ledger, its key not in it yet (the legacy partition)
  SELECT e.id, true FROM events e WHERE e.written_at = 0 AND e.transfer_id = $3 AND e.source = $1 AND e.event = $2 AND e.edit_number = $4
  LIMIT 1`);

// Oldest first along seen_keys_seen_at, each key's event looked up by its id. OFFSET 0 keeps that lookup a
// probe per key: as an anti-join the planner may hash the whole events table for one batch.
const PRUNE_SEEN_KEYS = named('prune_seen_keys', `
  DELETE FROM seen_keys WHERE key IN (
    SELECT k.key FROM seen_keys k
    WHERE k.seen_at < $1 AND NOT EXISTS (SELECT 1 FROM events e WHERE e.id = k.event_id OFFSET 0)
    ORDER BY k.seen_at LIMIT $2 FOR UPDATE SKIP LOCKED)`);
const BACKFILL_SEEN_KEYS = named('backfill_seen_keys', `
  WITH walk AS (
    SELECT next_event_id, below_event_id FROM seen_keys_backfill WHERE id = 1 AND next_event_id < below_event_id FOR UPDATE
  ), batch AS (
    -- Lateral, so the events are read only when the walk has a step left, and from its place: a plain join
    -- was planned as a walk of every event's id, in every retention pass, long after the backfill ended.
    SELECT b.* FROM walk w CROSS JOIN LATERAL (
      SELECT e.id, e.source, e.event, e.transfer_id, e.edit_number, coalesce(e.imported_at, e.received_at) AS seen_at
      FROM events e WHERE e.id >= w.next_event_id AND e.id < w.below_event_id ORDER BY e.id LIMIT $1) b
  ), kept AS (
    INSERT INTO seen_keys (key, event_id, seen_at)
    SELECT hookrelay_seen_key(b.source, b.event, b.transfer_id, b.edit_number), b.id, b.seen_at FROM batch b
    ON CONFLICT (key) DO NOTHING
  ), moved AS (
    UPDATE seen_keys_backfill SET next_event_id = CASE WHEN (SELECT count(*) FROM batch) < $1 THEN below_event_id ELSE (SELECT max(id) + 1 FROM batch) END
    WHERE id = 1 AND EXISTS (SELECT 1 FROM walk)
  )
  SELECT count(*)::int AS n FROM batch`);
const GET_SEEN = named('get_seen', 'SELECT * FROM seen_keys WHERE key = hookrelay_seen_key($1, $2, $3, 0)');

/** Reads of events (lists, search, export) and the writes of import and retention. */
export class EventQueries {
  constructor(private readonly db: pg.Pool) {}

  async get(id: number): Promise<StoredEvent | null> {
    const { rows } = await this.db.query<EventRow>({ ...GET_EVENT, values: [id] });
    return rows[0] ? toStoredEvent(readEventRow(rows[0])) : null;
  }

  async headers(id: number): Promise<Record<string, string> | null> {
    const { rows } = await this.db.query<{ headers: string }>({ ...GET_EVENT_HEADERS, values: [id] });
    return rows[0] ? (JSON.parse(rows[0].headers) as Record<string, string>) : null;
  }

  /**
   * Newest first from the cursor on: by (received_at, id) when a time range is given (the index that serves
   * both the range and the order), by id otherwise. The planner has statistics and sees the values (node-postgres
   * sends these unnamed, planned for their parameters), so each filter's own index drives when it is the rarest.
   * A search by one indexed column alone, or by none, has the same plan whatever the value (that column's index
   * of each partition, merged by id): it is prepared by its shape, so a connection plans it once rather than
   * every time over every partition and its indexes.
   */
  async list(search: EventSearch, page: { limit: number; after?: EventPosition }): Promise<EventPage> {
    const params = new SqlParams();
    const byTime = search.receivedFrom !== undefined || search.receivedTo !== undefined;
    const where = [eventSelectionSql(search, params)];
    if (page.after) {
      where.push(byTime ? `(e.received_at, e.id) < (${params.add(page.after.receivedAt)}, ${params.add(page.after.id)})` : `e.id < ${params.add(page.after.id)}`);
    }
    const order = byTime ? 'e.received_at DESC, e.id DESC' : 'e.id DESC';
    const text = `SELECT ${SUMMARY_COLUMNS} FROM events e WHERE ${where.join(' AND ')} ORDER BY ${order} LIMIT ${params.add(page.limit + 1)}`;
    const filters = (Object.keys(search) as (keyof EventSearch)[]).filter((key) => search[key] !== undefined);
    const samePlan = filters.length === 0 || (filters.length === 1 && ONE_PLAN_FILTERS.has(filters[0]!));
    const { rows } = await this.db.query<EventRow>(samePlan ? { ...namedByShape('events_list', text), values: params.values } : { text, values: params.values });
    const items = rows.slice(0, page.limit).map((row) => toEventSummary(readEventRow(row)));
    const last = items.at(-1);
    return { items, next: rows.length > page.limit && last ? { id: last.id, receivedAt: last.receivedAt } : null };
  }

  async firstIdReceivedFrom(receivedFrom: number): Promise<number | null> {
    const params = new SqlParams();
    const where = eventSelectionSql({ receivedFrom }, params);
    return (await this.db.query<{ id: number | null }>(`SELECT min(e.id) AS id FROM events e WHERE ${where}`, params.values)).rows[0]!.id;
  }

  async count(selection: EventSelection): Promise<number> {
    const params = new SqlParams();
    const where = eventSelectionSql(selection, params);
    return (await this.db.query<{ n: number }>(`SELECT count(*) AS n FROM events e WHERE ${where}`, params.values)).rows[0]!.n;
  }

  async listFull(selection: EventSelection, limit: number): Promise<StoredEvent[]> {
    const params = new SqlParams();
    const where = eventSelectionSql(selection, params);
    const { rows } = await this.db.query<EventRow>(`SELECT e.* FROM events e WHERE ${where} ORDER BY e.id LIMIT ${params.add(limit)}`, params.values);
    return rows.map((row) => toStoredEvent(readEventRow(row)));
  }

  async listBodies(selection: EventSelection, limit: number): Promise<EventBody[]> {
    const params = new SqlParams();
    const where = eventSelectionSql(selection, params);
    const { rows } = await this.db.query<EventBody>(`SELECT e.id, e.source, e.event, e.body, e.rule_set_hash AS "ruleSetHash", e.quarantine FROM events e WHERE ${where} ORDER BY e.id LIMIT ${params.add(limit)}`, params.values);
    return rows.map(readEventBody);
  }

  /** In the caller's transaction: events not already present (same key as ingest); an existing one is left as it is. */
  async importAll(client: pg.PoolClient, events: readonly ImportedEvent[], importedAt: number | null): Promise<ImportResult> {
    const result: ImportResult = { imported: 0, duplicates: 0, seenBefore: 0 };
    for (const e of events) {
      const seen = (await client.query<{ stored: boolean }>({
        ...FIND_SEEN, values: [eventText(e.source), eventText(e.event), eventText(e.transferId), e.edit?.number ?? 0],
      })).rows[0];
      if (seen) {
        if (seen.stored) result.duplicates += 1;
        else result.seenBefore += 1;
        continue;
      }
      const { rowCount } = await client.query({
        ...IMPORT_EVENT,
        values: [eventText(e.source), eventText(e.event), eventText(e.transferId), eventText(e.checkoutId), eventText(e.email), eventText(e.walletAddress), e.validation, e.receivedAt, e.lastReceivedAt, Math.min(e.receivedCount, MAX_RECEIVED_COUNT),
          JSON.stringify(e.headers), e.body, importedAt, e.ruleSetHash ?? null,
          e.edit?.number ?? 0, e.edit?.editedFrom ?? null, e.edit?.editedAt ?? null, e.edit?.via ?? null, e.totalPriceUsd ?? null,
          ...quarantineValues(e, Boolean)],
      });
      if (rowCount) result.imported += 1;
      else result.duplicates += 1;
    }
    return result;
  }

  async pruneOlderThan(storedBefore: number, limit: number): Promise<number> {
    return (await this.db.query({ ...PRUNE_OLDER_THAN, values: [storedBefore, limit] })).rowCount ?? 0;
  }

  /**
   * Deletes up to `limit` events older than `storedBefore` that are out of their partition's range (see
   * outOfPlaceDeletion), oldest partition first; the rest of each partition waits for its drop.
   */
  async pruneOutOfPlace(storedBefore: number, limit: number, partitions: readonly TimePartition[]): Promise<number> {
    let deleted = 0;
    for (const range of partitions) {
      if (deleted >= limit) break;
      const before = isLegacy(range) ? storedBefore : Math.min(storedBefore, range.from);
      deleted += (await this.db.query(outOfPlaceDeletion(range, before, limit - deleted))).rowCount ?? 0;
    }
    return deleted;
  }

  async pruneOldest(limit: number): Promise<number> {
    return (await this.db.query({ ...PRUNE_OLDEST, values: [limit] })).rowCount ?? 0;
  }

  async backfillSeenKeys(limit: number): Promise<number> {
    return (await this.db.query<{ n: number }>({ ...BACKFILL_SEEN_KEYS, values: [limit] })).rows[0]!.n;
  }

  /** SKIP LOCKED lets two nodes share the work. */
  async pruneSeenKeys(seenBefore: number, limit: number): Promise<number> {
    return (await this.db.query({ ...PRUNE_SEEN_KEYS, values: [seenBefore, limit] })).rowCount ?? 0;
  }

  async findSeenKey(key: { source: string; event: string; transferId: string }): Promise<SeenKeyRecord | null> {
    const { rows } = await this.db.query<{ key: string; event_id: number; seen_at: number }>({
      ...GET_SEEN, values: [eventText(key.source), eventText(key.event), eventText(key.transferId)],
    });
    return rows[0] ? { key: rows[0].key, eventId: rows[0].event_id, seenAt: rows[0].seen_at } : null;
  }
}
