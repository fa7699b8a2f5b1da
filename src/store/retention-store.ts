/**
 * Retention: each call is one short transaction; events with a pending delivery are never deleted.
 */
export interface RetentionStore {
  /**
   * Deletes up to `limit` of the oldest events stored before `storedBefore` (received before it, and for an
   * imported event also imported before it); returns how many. `leaveToPartitions` (a store with
   * maintainPartitions): only events outside their time partition's range (stored before the partitions, or
   * moved out of a dropped one); the others go with their partition, whole, once all of it is that old.
   */
  pruneEventsOlderThan(storedBefore: number, limit: number, options?: { leaveToPartitions?: boolean }): Promise<number>;
  /** Deletes up to `limit` of the oldest events; returns how many. */
  pruneOldestEvents(limit: number): Promise<number>;
  /**
   * A store whose history is partitioned by time (PostgreSQL): creates the partitions ahead of `now`, drops
   * those wholly stored before `storedBefore` and, while more than `maxEvents` are stored, the oldest whole
   * partitions that hold no more than the excess; pending events move to the current partition first.
   * Returns the events dropped by age and by count (estimates), and those moved. What is left is pruned in batches.
   */
  maintainPartitions?(plan: PartitionPlan): Promise<PartitionReport>;
  /** Gives up to `maxPages` free database pages back to the file system; returns the free pages left. */
  reclaimFreePages(maxPages: number): Promise<number>;
}

export interface PartitionPlan {
  now: number;
  /** Partitions whose range ends at or before this are dropped (retention.maxAgeDays). */
  storedBefore: number;
  maxEvents: number;
  /** Renews the retention lease, between steps that may wait; false (lost) stops the pass. */
  renew?: () => Promise<boolean>;
}

export interface PartitionReport {
  byAge: number;
  byCount: number;
  moved: number;
  /** Partitions created ahead and dropped (whole ranges, all tables). */
  created: number;
  dropped: number;
  /** The lease was lost: the pass stopped. */
  interrupted: boolean;
  /**
   * At most this many events are left (the sum of the partitions' id spans), null when not known. At or
   * under `maxEvents`, count-based retention has nothing to do and counts nothing.
   */
  eventsAtMost: number | null;
}
