import type { AttemptRecord } from './outbox-store.js';

/**
 * The delivery loop's side of the outbox: leasing due deliveries, recording attempts, giving rows back.
 * Lease ends are the store's clock (PostgreSQL: the database's), so nodes agree on them.
 */
export interface DeliveryQueue {
  /** Leases up to `limit` due pending deliveries until `leaseMs` from the store's now. */
  claimDueDeliveries(options: { limit: number; leaseMs: number }): Promise<ClaimedDelivery[]>;
  /** Appends the attempt and moves the delivery on, if the lease is still ours (else a no-op: false). */
  recordAttempt(deliveryId: number, leaseToken: string, attempt: AttemptRecord, resolution: AttemptResolution): Promise<boolean>;
  /**
   * Keeps the body a claimed delivery's transform rendered, if the lease is still ours (else a no-op: false):
   * every later attempt sends these bytes.
   */
  saveRenderedBody(deliveryId: number, leaseToken: string, rendered: { body: Buffer; contentType: string }): Promise<boolean>;
  /** Gives a claimed delivery back without an attempt (destination busy or paused), due again at `nextAttemptAt`. */
  releaseDelivery(deliveryId: number, leaseToken: string, nextAttemptAt: number): Promise<void>;
  /** When the next pending delivery falls due (unix ms), or null if none is pending; rows waiting behind their key's head do not count. */
  nextDueAt(): Promise<number | null>;
  /**
   * Moves the end of a live lease to `leaseMs` from now (PostgreSQL: the database's now); false when the
   * lease is no longer this token's (it ran out and another claim took the row, or the row was settled).
   */
  renewLease(deliveryId: number, leaseToken: string, options: { leaseMs: number }): Promise<boolean>;
  /**
   * Calls `listener` after a commit left deliveries pending (ingest, replay, retry, redrive; the rule is
   * `leavesDeliveriesPending`, deliveries-due.ts): on this process, and on PostgreSQL on any node
   * (LISTEN/NOTIFY, when available). The one wake-up of the delivery loops, instead of their next poll.
   * Returns the function that stops the calls.
   */
  onDeliveriesDue(listener: () => void): () => void;
}

/**
 * A delivery the worker holds a lease on: only what an attempt needs (claiming is the worker's hot path;
 * the rest of the row is for the admin views, through `getDelivery`).
 */
export interface ClaimedDelivery {
  id: number;
  eventId: number;
  ruleId: string;
  /** The rule set it was planned with: the worker sends it with that version of its rule. */
  ruleSetHash: string;
  contentType: string;
  /** Attempts made before this one. */
  attempts: number;
  /** Attempts that do not count toward the current pass of the rule's retry schedule (see `Delivery.passOffset`). */
  passOffset: number;
  leaseToken: string;
  /** An ordered rule's key value; null: unordered. */
  orderKey: string | null;
  /** When a retryable failure first left it pending (how long it has blocked its key, if ordered); null before. */
  blockedSince: number | null;
  /** `code: message` of the last attempt's error (a lost connection, a timeout, ...); null before the first attempt or when it had none. */
  lastError: string | null;
  /** What to send: the delivery's own body (a rendered transform), or the event's raw bytes. */
  payload: Buffer;
  /** Whether `payload` is the delivery's own body; false: the event's bytes, which a rule with a transform renders first. */
  hasBody: boolean;
}

export type AttemptResolution =
  | { state: 'delivered' }
  /**
   * `outsideSchedule`: this failure does not count toward the rule's retry schedule (a connection lost before
   * any answer, tried again at once): the next failure takes the step this one would have taken.
   */
  | { state: 'pending'; nextAttemptAt: number; outsideSchedule?: boolean }
  /** `retryable`: retries ran out on failures worth retrying (network, timeout, 408/425/429/5xx): a redrive may send it again. */
  | { state: 'dead'; reason: string; retryable?: boolean };
