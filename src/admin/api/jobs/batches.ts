import type { EventSelection, Store } from '../../../store/store.js';

/** Rows per batch: one short transaction each, so ingest never waits long for the write lock. */
export const JOB_BATCH_SIZE = 200;
/** Ids counted per query when sizing a job: each count stays a few milliseconds long at any table size. */
const COUNT_WINDOW = 50_000;

/** Lets ingest and other requests run between two batches. */
export function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * How many events up to `throughId` match: counted in id windows with a yield between them, because one
 * count over a million rows with a delivery-state filter would hold the event loop for a noticeable time.
 */
export async function countEventsThrough(store: Store, selection: EventSelection, throughId: number): Promise<number> {
  // Retention deletes the oldest events: start at the oldest one still stored.
  const [oldest] = await store.listEventBodies({}, 1);
  if (!oldest) return 0;
  let total = 0;
  for (let afterId = oldest.id - 1; afterId < throughId; afterId += COUNT_WINDOW) {
    total += await store.countEvents({ ...selection, afterId, throughId: Math.min(afterId + COUNT_WINDOW, throughId) });
    await yieldToEventLoop();
  }
  return total;
}
