/**
 * Retention: each call is one short transaction; events with a pending delivery are never deleted.
 */
export interface RetentionStore {
  /**
   * Deletes up to `limit` of the oldest events stored before `storedBefore` (received before it, and for an
   * imported event also imported before it); returns how many.
   */
  pruneEventsOlderThan(storedBefore: number, limit: number): Promise<number>;
  /** Deletes up to `limit` of the oldest events; returns how many. */
  pruneOldestEvents(limit: number): Promise<number>;
  /** Gives up to `maxPages` free database pages back to the file system; returns the free pages left. */
  reclaimFreePages(maxPages: number): Promise<number>;
}
