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
  /** Throws `store_unavailable` unless a write can commit right now. */
  checkWritable(): Promise<void>;
  close(): Promise<void>;
}
