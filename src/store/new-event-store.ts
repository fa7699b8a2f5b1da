import type { EventSearch, EventSummary } from './event-store.js';

/**
 * Where a reader of newly stored events stands in the store's commit order: every event at or before it has
 * been read (or passed over by a filter), every event committed later comes after it. SQLite commits ids in
 * increasing order, so the id alone says it (`tx` null). On PostgreSQL ids are taken when a row is written,
 * not when its transaction commits, so the position is `(tx, id)`: the writing transaction (xid8, as text)
 * and the id; `id` 0 stands before every event of that transaction.
 */
export interface StreamPosition {
  tx: string | null;
  id: number;
}

/** Where a reader starts: after the events committed so far, after one event, or with those received since a time. */
export type StreamStart = { now: true } | { afterEventId: number } | { receivedFrom: number };

/** A newly stored event as a stream sends it: its summary and when it was imported. */
export interface NewEventSummary extends EventSummary {
  importedAt: number | null;
}

/** The same with the headers and exact bytes, read only when asked for (they are most of a row). */
export interface NewEventWithBody extends NewEventSummary {
  headers: Record<string, string>;
  body: Buffer;
}

export interface NewEvents<E extends { id: number } = NewEventSummary> {
  /** In commit order, each after `after`; at most `limit`. */
  events: E[];
  /** Where the next read starts: past these events and past every committed event the filter left out. */
  position: StreamPosition;
  /**
   * True when events committed beyond `position` cannot be read yet because a transaction older than theirs is
   * still open (PostgreSQL): read again shortly, nobody will announce it. Always false on SQLite.
   */
  heldBack: boolean;
}

/** Reading newly stored events in commit order: event streams and `hookrelay listen`. */
export interface NewEventReader {
  streamPosition(start: StreamStart): Promise<StreamPosition>;
  /**
   * Up to `limit` events matching `filter` committed after `after`, in commit order; never one twice across
   * reads that pass each answer's `position` to the next, never one skipped, even one that committed late.
   */
  readNewEvents<B extends boolean>(filter: EventSearch, after: StreamPosition, limit: number, withBodies: B): Promise<NewEvents<NewEventRead<B>>>;
}

/** What `readNewEvents` returns per event: with headers and body only when read `withBodies`. */
export type NewEventRead<B extends boolean> = B extends true ? NewEventWithBody : NewEventSummary;

/**
 * Newly stored events in commit order, and the signal that some were stored: event streams and `hookrelay listen`.
 */
export interface NewEventStore extends NewEventReader {
  /**
   * Calls `listener` after a commit that stored new events (ingest, import, edited copy; repeats do not
   * count): in this process, and on PostgreSQL on any node (LISTEN/NOTIFY, else a poll every second). Readers
   * then read with `readNewEvents`; the store stays the source of truth. Returns the unsubscribe.
   */
  onEventsStored(listener: () => void): () => void;
}
