/**
 * Whether the store can take writes, and closing it.
 */
export interface StoreLifecycle {
  /** Throws `store_unavailable` unless a write can commit right now. */
  checkWritable(): Promise<void>;
  close(): Promise<void>;
}
