import type { EventSelection, EventStore } from '../../store/event-store.js';

/** Rows per batch: one short transaction each, so ingest never waits long for the write lock. */
export const JOB_BATCH_SIZE = 200;
/** Ids counted per query when sizing a job: each count stays a few milliseconds long at any table size. */
const COUNT_WINDOW = 50_000;

/** The newest event's id now (0 when none): bulk operations leave out events that arrive while they run. */
export async function newestEventId(store: EventStore): Promise<number> {
  return (await store.listEvents({}, { limit: 1 })).items[0]?.id ?? 0;
}

/** Lets ingest and other requests run between two batches. */
export function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * The id a walk over `selection` in id order starts after: just before the first event received since
 * `receivedFrom` when the selection has one (a replay of the last hour skips the years before it), else 0.
 * Null when no event was received since then.
 */
export async function startingAfterId(store: EventStore, selection: EventSelection): Promise<number | null> {
  if (selection.receivedFrom === undefined) return 0;
  const first = await store.firstEventIdReceivedFrom(selection.receivedFrom);
  return first === null ? null : first - 1;
}

/**
 * How many events up to `throughId` match: counted in id windows with a yield between them, because one
 * count over a million rows with a delivery-state filter would hold the event loop for a noticeable time.
 */
export async function countEventsThrough(store: EventStore, selection: EventSelection, throughId: number): Promise<number> {
  const startAfter = await startingAfterId(store, selection);
  if (startAfter === null) return 0;
  // A time range starts at its first event, which exists. Without one, start at the oldest event still stored
  // (retention deletes the oldest), not at id 1.
  const firstId = startAfter > 0 ? startAfter + 1 : (await store.listEventBodies({}, 1))[0]?.id;
  if (firstId === undefined) return 0;
  let total = 0;
  for (let afterId = firstId - 1; afterId < throughId; afterId += COUNT_WINDOW) {
    total += await store.countEvents({ ...selection, afterId, throughId: Math.min(afterId + COUNT_WINDOW, throughId) });
    await yieldToEventLoop();
  }
  return total;
}
