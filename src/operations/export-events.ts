import type { EventSearch, EventSelection, EventStore } from '../store/event-store.js';
import { recordFromStored, type ExportRecord } from './export-format.js';
import { JOB_BATCH_SIZE, newestEventId, startingAfterId, yieldToEventLoop } from './jobs/batches.js';
import type { EventArchive } from '../store/event-archive.js';

/** An export under way: how many events it holds, and their records, oldest first. */
export interface EventExport {
  total: number;
  records: AsyncIterable<ExportRecord>;
}

/** The events a filter selects, as export records; events arriving meanwhile are left out. */
export async function exportEvents(store: EventStore & EventArchive, filter: EventSearch): Promise<EventExport> {
  const selection: EventSelection = { ...filter, throughId: await newestEventId(store) };
  const total = await store.countEvents(selection);
  async function* records(): AsyncGenerator<ExportRecord> {
    // A time range starts at its first event, not with a scan of the history before it.
    const start = await startingAfterId(store, selection);
    if (start === null) return;
    let afterId = start;
    for (;;) {
      const events = await store.listEventsForExport({ ...selection, afterId }, JOB_BATCH_SIZE); // as many per read as a job's batch
      if (events.length === 0) return;
      for (const event of events) yield recordFromStored(event);
      afterId = events.at(-1)!.id;
      await yieldToEventLoop();
    }
  }
  return { total, records: records() };
}
