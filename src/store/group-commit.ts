/**
 * Group commit, the policy both backends share: items submitted while the store is busy are committed
 * together, one transaction per batch, and each submitter is answered only once its item's transaction has
 * committed (or failed). The backends keep what differs: SQLite's synchronous transactions, WAL fsync and
 * pacing (`SqliteGroupCommit`), PostgreSQL's asynchronous ones, in-flight limit and deadlines
 * (`PostgresGroupCommit`).
 */
export interface GroupCommitOptions {
  /** Upper bound per transaction, so one huge burst does not hold the write lock for long (default 256). */
  maxBatch?: number;
  /** Errors that fail every item alike (disk full, the database gone): no point trying the items one by one. */
  failsEveryItem?: (err: unknown) => boolean;
}

export const DEFAULT_MAX_BATCH = 256;

/**
 * What a failed batch does next: a batch of one, or an error that fails every item alike, fails all its
 * items; otherwise each item is committed in a transaction of its own, so one bad item (bad data) does not
 * fail its neighbours.
 */
export function afterFailedBatch(err: unknown, batchSize: number, failsEveryItem: (err: unknown) => boolean): 'fail-all' | 'one-by-one' {
  return batchSize === 1 || failsEveryItem(err) ? 'fail-all' : 'one-by-one';
}
