import type { ServerResponse } from 'node:http';
import type { EventSelection, Store, StoredEvent } from '../../../store/store.js';
import type { StreamedEventView } from '../../../operations/view-schemas.js';
import { eventSummaryView } from '../../../operations/views.js';
import { newestEventId } from '../../../operations/jobs/batches.js';

export interface StreamSettings {
  heartbeatMs: number;
  bufferBytes: number;
  stallTimeoutMs: number;
}

export interface EventStreamOptions {
  store: Store;
  /** The list filter; the stream adds its own id bounds. */
  filter: EventSelection;
  includeBody: boolean;
  /** Send events with an id greater than this. */
  afterId: number;
  settings: StreamSettings;
  /** Called once when the stream has ended, for whatever reason. */
  onEnd(stream: EventStream, reason: StreamEndReason): void;
}

export type StreamEndReason = 'client_closed' | 'cut_off' | 'shutdown' | 'failed';

/** Events read from the store per query: bounds what one stream holds in memory besides its socket buffer. */
const BATCH = 50;
/** What a client that reconnects waits first (SSE `retry`). */
const RECONNECT_MS = 2_000;
/** How long a final message may take to reach the client before the socket is destroyed. */
const FINAL_FLUSH_MS = 5_000;

export function streamedEventView(event: StoredEvent, includeBody: boolean): StreamedEventView {
  const { body, headers, importedAt, ...summary } = event;
  return {
    ...eventSummaryView({ ...summary, bodyBytes: body.length }),
    imported: importedAt !== null,
    importedAt: importedAt === null ? null : new Date(importedAt).toISOString(),
    ...(includeBody && { headers, bodyBase64: body.toString('base64') }),
  };
}

/**
 * One open `GET /events/stream`. The store is the source of truth: a commit only wakes the stream, which
 * then reads the events after the last one it looked at, in id order. SQLite commits ids in order, so an
 * id at or below the newest one read is final; docs/admin-api.md describes what PostgreSQL needs on top.
 *
 * Memory stays bounded: at most `bufferBytes` (plus one message) wait in the socket's buffer; past that the
 * stream stops reading until the client drains it, and a client that does not within `stallTimeoutMs` is
 * cut off with a final `cutoff` message naming the last event id it was sent.
 */
export class EventStream {
  /** The highest event id looked at: sent, or passed over by the filter. */
  private cursor: number;
  /** The id of the last event sent (what a client resumes from). */
  private lastSentId: number;
  private reading = false;
  private wakeScheduled = false;
  private readAgain = false;
  private ended = false;
  private readonly heartbeat: NodeJS.Timeout;
  private readonly unsubscribe: () => void;
  /** The most bytes seen waiting in the response's buffers after a write. */
  peakBufferedBytes = 0;

  constructor(
    private readonly res: ServerResponse,
    private readonly options: EventStreamOptions,
  ) {
    this.cursor = options.afterId;
    this.lastSentId = options.afterId;
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      // Proxies such as nginx would otherwise hold messages back.
      'x-accel-buffering': 'no',
    });
    res.flushHeaders();
    // `ready` says where the stream starts, so a client that reconnects before any event misses none.
    this.write(`retry: ${RECONNECT_MS}\n\nevent: ready\ndata: ${JSON.stringify({ afterId: options.afterId })}\n\n`);
    this.unsubscribe = options.store.onEventsStored(() => this.wake());
    // Heartbeats keep proxies from closing an idle stream; re-reading then catches any wake that was missed.
    this.heartbeat = setInterval(() => {
      this.write(': heartbeat\n\n');
      this.wake();
    }, options.settings.heartbeatMs);
    res.on('close', () => this.end('client_closed'));
    this.wake();
  }

  /**
   * Reads and sends what has been stored since, on the next turn of the event loop: the events of one group
   * commit wake the stream once, not once each.
   */
  wake(): void {
    if (this.ended || this.wakeScheduled) return;
    this.wakeScheduled = true;
    setImmediate(() => {
      this.wakeScheduled = false;
      this.read();
    });
  }

  /** One read at a time; a wake during it reads again after it. */
  private read(): void {
    if (this.ended) return;
    if (this.reading) {
      this.readAgain = true;
      return;
    }
    this.reading = true;
    this.pump()
      .catch(() => this.finish('failed', { code: 'internal_error', message: 'The event store could not be read; reconnect to resume.' }))
      .finally(() => {
        this.reading = false;
      });
  }

  /** Ends the stream for a shutdown: a final message, then the connection closes. */
  shutDown(): void {
    this.finish('shutdown', { code: 'shutting_down', message: 'The server is shutting down; reconnect to resume.' });
  }

  private async pump(): Promise<void> {
    const { store, filter, includeBody, settings } = this.options;
    do {
      this.readAgain = false;
      for (;;) {
        // Everything at or below the newest id has committed (SQLite commits in id order): the filter may
        // pass over all of it, and the next read still starts above it.
        const newest = await newestEventId(store);
        if (newest <= this.cursor) break;
        const batch = await store.listEventsForExport({ ...filter, afterId: this.cursor, throughId: newest }, BATCH);
        for (const event of batch) {
          if (this.ended) return;
          if (this.res.writableLength >= settings.bufferBytes && !(await this.drained())) {
            if (!this.ended) this.finish('cut_off', { code: 'stream_overflow', message: `The client did not keep up (more than ${settings.bufferBytes} bytes waiting for ${settings.stallTimeoutMs} ms); reconnect with Last-Event-ID to resume.` });
            return;
          }
          if (this.ended) return;
          this.write(`id: ${event.id}\nevent: event\ndata: ${JSON.stringify(streamedEventView(event, includeBody))}\n\n`);
          this.cursor = event.id;
          this.lastSentId = event.id;
        }
        if (this.ended) return;
        if (batch.length < BATCH) {
          this.cursor = Math.max(this.cursor, newest);
          break;
        }
      }
    } while (this.readAgain && !this.ended);
  }

  /** Resolves true when the client has taken what was waiting, false when it did not in time (or left). */
  private drained(): Promise<boolean> {
    if (!this.res.writableNeedDrain) return Promise.resolve(true);
    return new Promise((resolve) => {
      const done = (ok: boolean): void => {
        clearTimeout(timer);
        this.res.off('drain', onDrain);
        this.res.off('close', onClose);
        resolve(ok);
      };
      const onDrain = (): void => done(true);
      const onClose = (): void => done(false);
      const timer = setTimeout(() => done(false), this.options.settings.stallTimeoutMs);
      this.res.on('drain', onDrain);
      this.res.on('close', onClose);
    });
  }

  private write(text: string): void {
    if (this.ended || this.res.writableEnded) return;
    this.res.write(text);
    this.peakBufferedBytes = Math.max(this.peakBufferedBytes, this.res.writableLength);
  }

  /** Sends a final `end` message, ends the response, and destroys the socket if the client never takes it. */
  private finish(reason: StreamEndReason, message: { code: string; message: string }): void {
    if (this.ended) return;
    this.write(`event: end\ndata: ${JSON.stringify({ ...message, lastEventId: this.lastSentId })}\n\n`);
    this.end(reason);
    this.res.end();
    setTimeout(() => this.res.destroy(), FINAL_FLUSH_MS).unref();
  }

  private end(reason: StreamEndReason): void {
    if (this.ended) return;
    this.ended = true;
    clearInterval(this.heartbeat);
    this.unsubscribe();
    this.options.onEnd(this, reason);
  }
}
