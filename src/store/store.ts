/**
 * The one interface every module uses to reach stored data. SQLite implements it today; another backend
 * joins by implementing it and passing test/store-contract.ts.
 */

export type Validation = 'valid' | 'unrecognised';

export interface NewEvent {
  source: string;
  event: string;
  /** `result.id` of the body: with source and event, the idempotency key. */
  resultId: string;
  checkoutId: string | null;
  email: string | null;
  walletAddress: string | null;
  validation: Validation;
  receivedAt: number;
  headers: Record<string, string>;
  body: Buffer;
  /** Outbox rows for the rules that matched; written in the same transaction, only if the event is new. */
  deliveries?: NewDelivery[];
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
  createdAt: number;
  updatedAt: number;
}

/** A delivery the worker holds a lease on, with everything needed to send it. */
export interface ClaimedDelivery extends Delivery {
  leaseToken: string;
  /** What to send: the transformed body, or the event's raw bytes. */
  payload: Buffer;
  event: { source: string; event: string; resultId: string };
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
  outcome: 'delivered' | 'retry' | 'dead';
}

export interface StoredAttempt extends AttemptRecord {
  id: number;
  deliveryId: number;
}

export type AttemptResolution =
  | { state: 'delivered' }
  | { state: 'pending'; nextAttemptAt: number }
  | { state: 'dead'; reason: string };

export interface DeliveryDetail extends Delivery {
  attemptLog: StoredAttempt[];
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

export interface SaveEventResult {
  id: number;
  duplicate: boolean;
  /** How many times this event has been received, counting this one. */
  receivedCount: number;
}

export interface StoredEvent extends Omit<NewEvent, 'receivedAt'> {
  id: number;
  receivedAt: number;
  lastReceivedAt: number;
  receivedCount: number;
}

export type EventSummary = Omit<StoredEvent, 'body' | 'headers'> & { bodyBytes: number };

export interface EventFilter {
  event?: string;
  source?: string;
  checkoutId?: string;
  email?: string;
  walletAddress?: string;
  resultId?: string;
  validation?: Validation;
  receivedFrom?: number;
  receivedTo?: number;
}

export interface Page<T> {
  items: T[];
  /** Pass as `before` to get the next (older) page; null when this is the last page. */
  nextCursor: number | null;
}

export interface Store {
  /** Stores the event once; resolves only after the transaction holding it has committed. */
  saveEvent(event: NewEvent): Promise<SaveEventResult>;
  getEvent(id: number): Promise<StoredEvent | null>;
  /** Newest first, keyset-paginated on id. */
  listEvents(filter: EventFilter, page: { limit: number; before?: number }): Promise<Page<EventSummary>>;
  /** Leases up to `limit` due pending deliveries until `now + leaseMs`. */
  claimDueDeliveries(options: { now: number; limit: number; leaseMs: number }): Promise<ClaimedDelivery[]>;
  /** Appends the attempt and moves the delivery on, if the lease is still ours (else a no-op: false). */
  recordAttempt(deliveryId: number, leaseToken: string, attempt: AttemptRecord, resolution: AttemptResolution): Promise<boolean>;
  /** Gives a claimed delivery back without an attempt (destination busy or paused), due again at `nextAttemptAt`. */
  releaseDelivery(deliveryId: number, leaseToken: string, nextAttemptAt: number): Promise<void>;
  /** When the next pending delivery falls due (unix ms), or null if none is pending. */
  nextDueAt(): Promise<number | null>;
  getDelivery(id: number): Promise<DeliveryDetail | null>;
  listDeliveries(filter: DeliveryFilter, page: { limit: number; before?: number }): Promise<Page<Delivery>>;
  /** New outbox rows for a stored event (replay through the current rules). */
  createDeliveries(eventId: number, deliveries: NewDelivery[], origin: DeliveryOrigin): Promise<number[]>;
  /** Makes a delivered or dead delivery pending and due now; false if it is already pending or missing. */
  retryDelivery(id: number, now: number): Promise<boolean>;
  outboxStats(now: number): Promise<OutboxStats>;
  /** Throws `store_unavailable` unless a write can commit right now. */
  checkWritable(): Promise<void>;
  close(): Promise<void>;
}
