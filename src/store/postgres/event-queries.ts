import type pg from 'pg';
import type { ImportedEvent, ImportResult } from '../event-archive.js';
import { MAX_RECEIVED_COUNT, type EventPosition, type EventSearch, type EventPage, type EventSelection, type StoredEvent, type EventBody } from '../event-store.js';
import { SUMMARY_COLUMNS, toEventSummary, toStoredEvent, type EventRow } from '../sqlite/event-rows.js';
import { eventSelectionSql } from './event-filter-sql.js';
import { eventText, readEventBody, readEventRow } from '../storable-text.js';
import { named, SqlParams } from './sql-params.js';

const GET_EVENT = named('get_event', 'SELECT * FROM events WHERE id = $1');
const GET_EVENT_HEADERS = named('get_event_headers', 'SELECT headers FROM events WHERE id = $1');

const IMPORT_EVENT = named('import_event', `
  INSERT INTO events (source, event, transfer_id, checkout_id, email, wallet_address, validation, received_at, last_received_at, received_count,
                      headers, body, imported_at, rule_set_hash, edit_number, edited_from, edited_at, edited_via, total_price_usd)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19)
  ON CONFLICT (transfer_id, source, event, edit_number) DO NOTHING
  RETURNING id`);

const NOT_PENDING = "NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.event_id = e.id AND d.state = 'pending')";

/**
 * Retention deletes in small batches; SKIP LOCKED lets two nodes pruning at once share the work instead of
 * waiting on each other's rows. Deleting an event deletes its deliveries and attempts (ON DELETE CASCADE).
 */
const PRUNE_OLDER_THAN = named('prune_older_than', `
  DELETE FROM events WHERE id IN (
    SELECT e.id FROM events e
    WHERE e.received_at < $1 AND (e.imported_at IS NULL OR e.imported_at < $1) AND ${NOT_PENDING}
    ORDER BY e.received_at, e.id LIMIT $2 FOR UPDATE SKIP LOCKED)`);
const PRUNE_OLDEST = named('prune_oldest', `
  DELETE FROM events WHERE id IN (
    SELECT e.id FROM events e WHERE ${NOT_PENDING} ORDER BY e.received_at, e.id LIMIT $1 FOR UPDATE SKIP LOCKED)`);

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
   */
  async list(search: EventSearch, page: { limit: number; after?: EventPosition }): Promise<EventPage> {
    const params = new SqlParams();
    const byTime = search.receivedFrom !== undefined || search.receivedTo !== undefined;
    const where = [eventSelectionSql(search, params)];
    if (page.after) {
      where.push(byTime ? `(e.received_at, e.id) < (${params.add(page.after.receivedAt)}, ${params.add(page.after.id)})` : `e.id < ${params.add(page.after.id)}`);
    }
    const order = byTime ? 'e.received_at DESC, e.id DESC' : 'e.id DESC';
    const { rows } = await this.db.query<EventRow>(
      `SELECT ${SUMMARY_COLUMNS} FROM events e WHERE ${where.join(' AND ')} ORDER BY ${order} LIMIT ${params.add(page.limit + 1)}`,
      params.values,
    );
    const items = rows.slice(0, page.limit).map((row) => toEventSummary(readEventRow(row)));
    const last = items.at(-1);
    return { items, next: rows.length > page.limit && last ? { id: last.id, receivedAt: last.receivedAt } : null };
  }

  async firstIdReceivedFrom(receivedFrom: number): Promise<number | null> {
    return (await this.db.query<{ id: number | null }>('SELECT min(id) AS id FROM events WHERE received_at >= $1', [receivedFrom])).rows[0]!.id;
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
    const { rows } = await this.db.query<EventBody>(`SELECT e.id, e.source, e.event, e.body, e.rule_set_hash AS "ruleSetHash" FROM events e WHERE ${where} ORDER BY e.id LIMIT ${params.add(limit)}`, params.values);
    return rows.map(readEventBody);
  }

  /** In the caller's transaction: events not already present (same key as ingest); an existing one is left as it is. */
  async importAll(client: pg.PoolClient, events: readonly ImportedEvent[], importedAt: number | null): Promise<ImportResult> {
    let imported = 0;
    for (const e of events) {
      const { rowCount } = await client.query({
        ...IMPORT_EVENT,
        values: [eventText(e.source), eventText(e.event), eventText(e.transferId), eventText(e.checkoutId), eventText(e.email), eventText(e.walletAddress), e.validation, e.receivedAt, e.lastReceivedAt, Math.min(e.receivedCount, MAX_RECEIVED_COUNT),
          JSON.stringify(e.headers), e.body, importedAt, e.ruleSetHash ?? null,
          e.edit?.number ?? 0, e.edit?.editedFrom ?? null, e.edit?.editedAt ?? null, e.edit?.via ?? null, e.totalPriceUsd ?? null],
      });
      imported += rowCount ?? 0;
    }
    return { imported, duplicates: events.length - imported };
  }

  async pruneOlderThan(storedBefore: number, limit: number): Promise<number> {
    return (await this.db.query({ ...PRUNE_OLDER_THAN, values: [storedBefore, limit] })).rowCount ?? 0;
  }

  async pruneOldest(limit: number): Promise<number> {
    return (await this.db.query({ ...PRUNE_OLDEST, values: [limit] })).rowCount ?? 0;
  }
}
