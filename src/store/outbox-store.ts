import type { DeliveryRedrive } from './outage-store.js';

/**
 * The outbox as operators see and change it one delivery at a time: reading, counting, replaying, retrying.
 */
export interface OutboxStore {
  getDelivery(id: number): Promise<DeliveryDetail | null>;
  listDeliveries(filter: DeliveryFilter, page: { limit: number; before?: number }): Promise<Page<Delivery>>;
  /** New outbox rows for a stored event (replay through the current rules). */
  createDeliveries(eventId: number, deliveries: NewDelivery[], origin: DeliveryOrigin): Promise<number[]>;
  /**
   * Makes a delivered or dead delivery pending and due now; false if it is already pending or missing. An
   * ordered rule's delivery joins the back of its key (as do bulk retries).
   */
  retryDelivery(id: number): Promise<boolean>;
  /** Counted at the store's now. */
  outboxStats(): Promise<OutboxStats>;
  /** The blocked keys of an ordered rule, longest blocked first. */
  listBlockedKeys(ruleId: string, limit: number): Promise<BlockedKey[]>;
  /** How many keys are blocked, per ordered rule that has any. */
  blockedKeyCounts(): Promise<Map<string, number>>;
  /** Deliveries per state of each rule (zeros for a rule without any). */
  deliveryCountsByRule(ruleIds: readonly string[]): Promise<Map<string, DeliveryCounts>>;
  /** Deliveries per state of each event (zeros for an event without any), for a page of a list: one query for all. */
  deliveryCountsByEvent(eventIds: readonly number[]): Promise<Map<number, DeliveryCounts>>;
}

export type DeliveryState = 'pending' | 'delivered' | 'dead';
export type DeliveryOrigin = 'ingest' | 'replay';

export interface NewDelivery {
  ruleId: string;
  ruleSetHash: string;
  /** Transformed body; null = forward the event's raw bytes untouched. */
  body: Buffer | null;
  contentType: string;
  /** Delay before the first attempt (the rule's first schedule step). */
  delayMs?: number;
  /** Set when the delivery can never succeed (a transform failed): stored dead-lettered. */
  deadReason?: string;
  /**
   * An ordered rule's key value: the store gives the row the next sequence number of its (rule, key), and
   * claims it only once no earlier row of that key is pending. Absent: unordered.
   */
  orderKey?: string;
}

export interface Delivery {
  id: number;
  eventId: number;
  ruleId: string;
  ruleSetHash: string;
  origin: DeliveryOrigin;
  state: DeliveryState;
  contentType: string;
  attempts: number;
  nextAttemptAt: number | null;
  lastStatus: number | null;
  lastError: string | null;
  deadReason: string | null;
  /** An ordered rule's key value; null: unordered. */
  orderKey: string | null;
  /**
   * Attempts that do not count toward the current pass of the rule's retry schedule: those before a redrive
   * (which starts a new pass), and connections lost before any answer that were tried again at once.
   */
  passOffset: number;
  createdAt: number;
  updatedAt: number;
}

/** A key of an ordered rule whose head has failed and is still pending: every later delivery of the key waits. */
export interface BlockedKey {
  key: string;
  head: {
    deliveryId: number;
    eventId: number;
    attempts: number;
    /** When the head's first failed attempt started. */
    blockedSince: number;
    nextAttemptAt: number | null;
    lastStatus: number | null;
    lastError: string | null;
  };
  /** Pending deliveries of the key behind the head. */
  waiting: number;
}

export interface AttemptRecord {
  attempt: number;
  startedAt: number;
  durationMs: number;
  urlOrigin: string;
  status: number | null;
  errorCode: string | null;
  errorMessage: string | null;
  responseExcerpt: string | null;
  /** The state the attempt left the delivery in. */
  outcome: DeliveryState;
}

export interface StoredAttempt extends AttemptRecord {
  id: number;
  deliveryId: number;
}

export interface DeliveryDetail extends Delivery {
  attemptLog: StoredAttempt[];
  /** Each time it was sent again after dying during an outage, oldest first. */
  redrives: DeliveryRedrive[];
}

export interface OutboxStats {
  pending: number;
  due: number;
  dead: number;
  /** Age (ms) of the oldest due pending delivery; 0 when none is due. */
  oldestDueAgeMs: number;
}

export interface DeliveryFilter {
  state?: DeliveryState;
  ruleId?: string;
  eventId?: number;
}

export interface Page<T> {
  items: T[];
  /** Pass as `before` to get the next (older) page; null when this is the last page. */
  nextCursor: number | null;
}

/** How many deliveries are in each state. */
export interface DeliveryCounts {
  pending: number;
  delivered: number;
  dead: number;
}
