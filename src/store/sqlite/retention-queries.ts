import type { BetterSqlite3 } from '../../sqlite-driver.js';
import { deliveryStateSql } from './delivery-state-sql.js';
import type { SeenKeyQueries } from './seen-key-queries.js';

const NOT_PENDING = `NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.event_id = e.id AND ${deliveryStateSql('d', 'pending')})`;

/**
 * The oldest events stored before a time (params: that time twice, then the limit): oldest first along
 * events_received_at, which also holds `imported_at`, so imported events too young to go are stepped over
 * in the index without reading their rows. An imported event is old only once its import is too.
 */
export const AGED_EVENT_IDS_SQL = `SELECT e.id FROM events e
  WHERE e.received_at < ? AND (e.imported_at IS NULL OR e.imported_at < ?) AND ${NOT_PENDING}
  ORDER BY e.received_at, e.id LIMIT ?`;

/**
 * Retention's SQL, synchronous; each call is one short transaction of its own. Deleting an event deletes
 * its deliveries and their attempts (ON DELETE CASCADE). An event with a pending delivery is never
 * deleted: that delivery still needs the event's bytes.
 */
export class RetentionQueries {
  private readonly agedIds;
  private readonly oldestIds;
  private readonly deleteEvent;

  constructor(private readonly db: BetterSqlite3.Database, private readonly seenKeys: SeenKeyQueries) {
    // LIMIT keeps each transaction short.
    this.agedIds = db.prepare<[number, number, number], { id: number }>(AGED_EVENT_IDS_SQL);
    this.oldestIds = db.prepare<[number], { id: number }>(`SELECT e.id FROM events e WHERE ${NOT_PENDING} ORDER BY e.received_at, e.id LIMIT ?`);
    this.deleteEvent = db.prepare<[number]>('DELETE FROM events WHERE id = ?');
  }

  pruneOlderThan(storedBefore: number, limit: number): number {
    return this.db.transaction(() => this.delete(this.agedIds.all(storedBefore, storedBefore, limit).map((r) => r.id))).immediate();
  }

  pruneOldest(limit: number): number {
    return this.db.transaction(() => this.delete(this.oldestIds.all(limit).map((r) => r.id))).immediate();
  }

  /** Deletes the events after putting their keys in the ledger, in the caller's transaction: a repeat stays a duplicate. */
  private delete(ids: readonly number[]): number {
    this.seenKeys.keepKeysOf(ids);
    return ids.reduce((sum, id) => sum + this.deleteEvent.run(id).changes, 0);
  }

  /** Moves up to `maxPages` free pages to the end of the file and truncates them; returns the free pages left. */
  reclaimFreePages(maxPages: number): number {
    this.db.pragma(`incremental_vacuum(${Math.max(1, Math.floor(maxPages))})`);
    return this.db.pragma('freelist_count', { simple: true }) as number;
  }
}
