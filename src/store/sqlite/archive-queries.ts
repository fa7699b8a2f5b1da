import type { BetterSqlite3 } from '../../sqlite-driver.js';
import type { ImportedEvent, ImportResult } from '../event-archive.js';
import { MAX_RECEIVED_COUNT, type EventSelection, type StoredEvent, type EventBody } from '../event-store.js';
import { eventSelectionSql } from './event-filter-sql.js';
import { toStoredEvent, type EventRow } from './event-rows.js';
import { keyText, withExactKeys } from './key-text.js';
import { quarantineValues } from '../quarantine-columns.js';
import { NEXT_EVENT_ID_SQL } from './event-ids.js';
import type { SeenKeyQueries } from './seen-key-queries.js';

/** Export and import of whole events (raw bytes included), synchronous; the store picks the transaction. */
export class ArchiveQueries {
  private readonly insertIfNew;

  constructor(private readonly db: BetterSqlite3.Database, private readonly seenKeys: SeenKeyQueries) {
    // Same key as ingest: an event already stored is left exactly as it is.
    this.insertIfNew = db.prepare<unknown[], { id: number }>(`
      INSERT INTO events (id, source, event, transfer_id, checkout_id, email, wallet_address, total_price_usd, validation,
                          received_at, last_received_at, received_count, headers, body, imported_at, rule_set_hash,
                          edit_number, edited_from, edited_at, edited_via, issues, quarantine, released_at, released_by, release_forced)
      VALUES ((${NEXT_EVENT_ID_SQL}), ?, CAST(? AS TEXT), CAST(? AS TEXT), ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
      ON CONFLICT (transfer_id, source, event, edit_number) DO NOTHING
      RETURNING id`);
  }

  /**
   * The lowest id among events received at or after `receivedFrom`: every such event has an id at least this
   * big, so a walk in id order over a time range can start here instead of scanning the older history (a
   * range filter on received_at does not let `ORDER BY id` skip it). Through the received_at index.
   */
  firstIdReceivedFrom(receivedFrom: number): number | null {
    return this.db.prepare<[number], { id: number | null }>('SELECT min(id) AS id FROM events INDEXED BY events_received_at WHERE received_at >= ?').get(receivedFrom)!.id;
  }

  count(selection: EventSelection): number {
    const where = eventSelectionSql(selection, 'e');
    return this.db.prepare<unknown[], { n: number }>(`SELECT count(*) AS n FROM events e WHERE ${where.sql}`).get(...where.params)!.n;
  }

  /** Oldest first (ascending id), so an import recreates the events in the order they arrived. */
  listFull(selection: EventSelection, limit: number): StoredEvent[] {
    const where = eventSelectionSql(selection, 'e');
    const rows = this.db.prepare<unknown[], EventRow>(`SELECT e.* FROM events e WHERE ${where.sql} ORDER BY e.id LIMIT ?`).all(...where.params, limit);
    return withExactKeys(this.db, rows).map(toStoredEvent);
  }

  /** Oldest first, only what rules read: a replay batch skips the headers and their JSON. */
  listBodies(selection: EventSelection, limit: number): EventBody[] {
    const where = eventSelectionSql(selection, 'e');
    const rows = this.db
      .prepare<unknown[], EventBody>(`SELECT e.id, e.source, e.event, e.body, e.rule_set_hash AS ruleSetHash, e.quarantine FROM events e WHERE ${where.sql} ORDER BY e.id LIMIT ?`)
      .all(...where.params, limit);
    return withExactKeys(this.db, rows);
  }

  /** `importedAt`: when retention starts counting their age (null: from `receivedAt`, as if received here). */
  insertAll(events: readonly ImportedEvent[], importedAt: number | null): ImportResult {
    const result: ImportResult = { imported: 0, duplicates: 0, seenBefore: 0 };
    for (const e of events) {
      const seen = this.seenKeys.lookup({ ...e, editNumber: e.edit?.number ?? 0 });
      if (seen) {
        if (seen.stored) result.duplicates += 1;
        else result.seenBefore += 1;
        continue;
      }
      const row = this.insertIfNew.get(
        e.source, keyText(e.event), keyText(e.transferId), e.checkoutId, e.email, e.walletAddress, e.totalPriceUsd ?? null, e.validation,
        e.receivedAt, e.lastReceivedAt, Math.min(e.receivedCount, MAX_RECEIVED_COUNT), JSON.stringify(e.headers), e.body, importedAt, e.ruleSetHash ?? null,
        e.edit?.number ?? 0, e.edit?.editedFrom ?? null, e.edit?.editedAt ?? null, e.edit?.via ?? null, ...quarantineValues(e, Number),
      );
      if (row) result.imported += 1;
      else result.duplicates += 1;
    }
    return result;
  }
}
