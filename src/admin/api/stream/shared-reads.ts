import type { EventSearch } from '../../../store/event-store.js';
import type { NewEventReader, StreamPosition } from '../../../store/new-event-store.js';
import { streamedEventView } from '../../../operations/views.js';

/** Events read from the store per query: bounds what one stream holds in memory besides its socket buffer. */
const BATCH = 50;
/** The same with raw bodies (up to `maxBody` each, sent as base64): fewer, so a batch stays tens of MB at worst. */
const BATCH_WITH_BODIES = 8;
/** Messages are joined into writes of about this size: one write per client per commit, not one per event. */
export const CHUNK_BYTES = 64 * 1024;
/** How long a read is shared: long enough for every stream woken by one commit, short enough to stay fresh. */
const SHARE_MS = 5;

export interface StreamBatch {
  /**
   * The events' SSE messages, joined in order into chunks ready to write, each with the id of its last event.
   * A chunk holds at most CHUNK_BYTES, or one message that is larger on its own; it is encoded once here, not
   * once per stream that writes it.
   */
  chunks: { lastId: number; bytes: Buffer }[];
  /** The read returned as many events as it asked for: more may follow at once. */
  full: boolean;
  position: StreamPosition;
  heldBack: boolean;
}

/**
 * One read and one serialisation for all the streams that ask the same thing at once. A commit wakes every
 * open stream; those following live stand at the same position with the same filter, so one query and one
 * JSON text per event serve them all (50 streams cost about what one does). The hub forgets every shared
 * read before it wakes the streams after a commit, so no stream is handed a read older than that commit.
 */
export class SharedReads {
  private readonly reads = new Map<string, Promise<StreamBatch>>();

  constructor(private readonly store: NewEventReader) {}

  read(filter: EventSearch, after: StreamPosition, includeBody: boolean): Promise<StreamBatch> {
    const key = JSON.stringify([filter, after, includeBody]);
    let read = this.reads.get(key);
    if (!read) {
      const limit = includeBody ? BATCH_WITH_BODIES : BATCH;
      read = this.store.readNewEvents(filter, after, limit, includeBody).then(({ events, position, heldBack }) => ({
        chunks: chunkMessages(events.map((event) => ({ id: event.id, text: `id: ${event.id}\nevent: event\ndata: ${JSON.stringify(streamedEventView(event))}\n\n` }))),
        full: events.length === limit,
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

  /** Forgets every shared read: the next read of each stream goes to the store. */
  forget(): void {
    this.reads.clear();
  }
}

/** Joins SSE messages, in order, into chunks of at most CHUNK_BYTES (or one larger message alone). */
export function chunkMessages(messages: { id: number; text: string }[]): StreamBatch['chunks'] {
  const chunks: StreamBatch['chunks'] = [];
  let parts: string[] = [];
  let size = 0;
  let lastId = 0;
  const close = (): void => {
    if (parts.length > 0) chunks.push({ lastId, bytes: Buffer.from(parts.join('')) });
    parts = [];
    size = 0;
  };
  for (const message of messages) {
    if (size > 0 && size + message.text.length > CHUNK_BYTES) close();
    parts.push(message.text);
    size += message.text.length;
    lastId = message.id;
  }
  close();
  return chunks;
}
