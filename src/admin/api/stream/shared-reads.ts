import type { EventSearch, NewEventReader, Store, StreamPosition } from '../../../store/store.js';
import { streamedEventView } from '../../../operations/views.js';

/** Events read from the store per query: bounds what one stream holds in memory besides its socket buffer. */
export const BATCH = 50;
/** How long a read is shared: long enough for every stream woken by one commit, short enough to stay fresh. */
const SHARE_MS = 5;

export interface StreamBatch {
  /** Each event's id and its whole SSE message, ready to write. */
  messages: { id: number; text: string }[];
  position: StreamPosition;
  heldBack: boolean;
}

/**
 * One read and one serialisation for all the streams that ask the same thing at once. A commit wakes every
 * open stream; those following live stand at the same position with the same filter, so one query and one
 * JSON text per event serve them all (50 streams cost about what one does). A commit forgets every shared
 * read before the streams it wakes read again, so no stream is handed a read older than the last commit.
 */
export class SharedReads {
  private readonly reads = new Map<string, Promise<StreamBatch>>();
  private readonly unsubscribe: () => void;

  constructor(private readonly store: NewEventReader & Pick<Store, 'onEventsStored'>) {
    this.unsubscribe = store.onEventsStored(() => this.reads.clear());
  }

  read(filter: EventSearch, after: StreamPosition, includeBody: boolean): Promise<StreamBatch> {
    const key = JSON.stringify([filter, after, includeBody]);
    let read = this.reads.get(key);
    if (!read) {
      read = this.store.readNewEvents(filter, after, BATCH).then(({ events, position, heldBack }) => ({
        messages: events.map((event) => ({ id: event.id, text: `id: ${event.id}\nevent: event\ndata: ${JSON.stringify(streamedEventView(event, includeBody))}\n\n` })),
        position,
        heldBack,
      }));
      this.reads.set(key, read);
      const forget = (): void => {
        if (this.reads.get(key) === read) this.reads.delete(key);
      };
      setTimeout(forget, SHARE_MS).unref();
      read.catch(forget);
    }
    return read;
  }

  close(): void {
    this.unsubscribe();
    this.reads.clear();
  }
}
