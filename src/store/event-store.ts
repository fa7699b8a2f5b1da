import type { DeliveryState, NewDelivery } from './outbox-store.js';
import type { EventIssues, EventQuarantine, QuarantineState } from './quarantine-store.js';

/**
 * Storing received events and edited copies, and reading them back: one by one, a page at a time, in id order
 * (bulk operations) or as a count (ingest, the delivery loop, the admin views, jobs, retention).
 */
export interface EventStore {
  /** Stores the event once; resolves only after the transaction holding it has committed. */
  saveEvent(event: NewEvent): Promise<SaveEventResult>;
  getEvent(id: number): Promise<StoredEvent | null>;
  /**
   * Newest first, keyset-paginated from `after` (the last item of the previous page); ordered by receipt
   * time when a time range is given, by id otherwise. Every filter is served by an index, at any depth.
   */
  listEvents(filter: EventSearch, page: { limit: number; after?: EventPosition }): Promise<EventPage>;
  /** How many stored events match. */
  countEvents(selection: EventSelection): Promise<number>;
  /** What rules read of events (id, source, event name, raw bytes), oldest first; page on with `afterId`. */
  listEventBodies(selection: EventSelection, limit: number): Promise<EventBody[]>;
  /** The lowest id of the events received at or after `receivedFrom` (null: none): where a time-range walk in id order starts. */
  firstEventIdReceivedFrom(receivedFrom: number): Promise<number | null>;
  /** Stores an edited copy (next edit number of its transfer) and its deliveries in one transaction; returns its id. */
  saveEditedCopy(copy: NewEditedCopy): Promise<number>;
}

/**
 * `invalid`: fails the event schema: an edited copy its operator stored on purpose, or a received body answered
 * 422 and kept in quarantine.
 */
export type Validation = 'valid' | 'unrecognised' | 'invalid';

export interface NewEvent {
  source: string;
  event: string;
  /** `result.id` of the body: with source and event, the idempotency key. */
  transferId: string;
  checkoutId: string | null;
  email: string | null;
  walletAddress: string | null;
  /** `result.totalPriceUsd` of the body when it is a finite number; absent or null: none. */
  totalPriceUsd?: number | null;
  validation: Validation;
  receivedAt: number;
  headers: Record<string, string>;
  body: Buffer;
  /** The rule set that routed it (planned its deliveries): what `original` replay routing uses. */
  ruleSetHash?: string | null;
  /** Outbox rows for the rules that matched; written in the same transaction, only if the event is new. */
  deliveries?: NewDelivery[];
  /** What the spec schema or a pinned contract found wrong with the body; absent: nothing. */
  issues?: EventIssues | null;
  /** Stored in quarantine: not routed (no deliveries) until released. */
  held?: boolean;
}

/** The front end an edited copy was made through. */
export type EditVia = 'console' | 'cli' | 'api';

/** What makes an event an edited copy: never changed afterwards, never a duplicate of its original. */
export interface EventEdit {
  /** The stored event it was edited from (it may since have been pruned by retention). */
  editedFrom: number;
  editedAt: number;
  via: EditVia;
  /** 1, 2, ... among the copies of one transfer (0 is the received event): part of the idempotency key. */
  number: number;
}

/** An operator's edit of a stored event, stored as a new event with its deliveries, in one transaction. */
export interface NewEditedCopy extends Omit<NewEvent, 'receivedAt'> {
  editedFrom: number;
  editedAt: number;
  via: EditVia;
}

/**
 * The most times one event is counted as received: PostgreSQL's `integer`. A repeat beyond it is still
 * answered as a duplicate; the count stays there.
 */
export const MAX_RECEIVED_COUNT = 2_147_483_647;

export interface SaveEventResult {
  id: number;
  duplicate: boolean;
  /**
   * How many times this event has been received, counting this one; null for a repeat of an event retention
   * has removed (its key is in the ledger of seen keys, the count went with the event).
   */
  receivedCount: number | null;
}

export interface StoredEvent extends Omit<NewEvent, 'receivedAt' | 'issues' | 'held'>, EventQuarantine {
  id: number;
  /** Null for a body without a finite `result.totalPriceUsd`, and for a row a node of an earlier version stored. */
  totalPriceUsd: number | null;
  receivedAt: number;
  lastReceivedAt: number;
  receivedCount: number;
  /** When `events import` stored it (its retention age counts from then); null for a webhook received here. */
  importedAt: number | null;
  ruleSetHash: string | null;
  /** Set for an edited copy; null for a received (or imported) event. */
  edit: EventEdit | null;
}

export type EventSummary = Omit<StoredEvent, 'body' | 'headers' | 'importedAt' | 'ruleSetHash'> & { bodyBytes: number };

export interface EventFilter {
  event?: string;
  source?: string;
  checkoutId?: string;
  email?: string;
  walletAddress?: string;
  transferId?: string;
  validation?: Validation;
  /** Only events held in quarantine, or only those released from it. */
  quarantine?: QuarantineState;
  receivedFrom?: number;
  receivedTo?: number;
}

/** The admin list filter: the event filter plus "has at least one delivery in this state". */
export interface EventSearch extends EventFilter {
  deliveryState?: DeliveryState;
}

/** Filters of the CLI and bulk operations: the list filter, plus an id lower bound and a delivery state. */
export interface EventSelection extends EventFilter {
  /** Only events with an id greater than this (paging, or resuming an interrupted bulk operation). */
  afterId?: number;
  /** Only events with an id up to this one (a bulk operation leaves out events that arrive while it runs). */
  throughId?: number;
  /** Only events with at least one delivery in this state. */
  deliveryState?: DeliveryState;
}

/** Where a page of events ended: its last item's id and receipt time. */
export interface EventPosition {
  id: number;
  receivedAt: number;
}

export interface EventPage {
  items: EventSummary[];
  /** Pass as `after` for the next (older) page; null when this is the last page. */
  next: EventPosition | null;
}

/** An event as rules see it (replay): no headers, no parsed columns. */
export type EventBody = Pick<StoredEvent, 'id' | 'source' | 'event' | 'body' | 'ruleSetHash'> & {
  /** Set by `listEventBodies`: a held event is routed only by its release, never by a replay. */
  quarantine?: StoredEvent['quarantine'];
};
