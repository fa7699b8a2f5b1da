import type { ServerResponse } from 'node:http';
import type { EventSearch } from '../../../store/event-store.js';
import type { StreamPosition } from '../../../store/new-event-store.js';
import { positionText } from '../../../operations/stream-position.js';
import type { SharedReads } from './shared-reads.js';

export interface StreamSettings {
  heartbeatMs: number;
  bufferBytes: number;
  stallTimeoutMs: number;
}

export interface EventStreamOptions {
  /** Reads shared with the other open streams. */
  reads: SharedReads;
  /** The list filter. */
  filter: EventSearch;
  includeBody: boolean;
  /** Send the events committed after this position. */
  start: StreamPosition;
  settings: StreamSettings;
  /** Called once when the stream has ended, for whatever reason. */
  onEnd(stream: EventStream, reason: StreamEndReason): void;
}

export type StreamEndReason = 'client_closed' | 'cut_off' | 'shutdown' | 'failed';

/** What a client that reconnects waits first (SSE `retry`). */
const RECONNECT_MS = 2_000;
/** How long a final message may take to reach the client before the socket is destroyed. */
const FINAL_FLUSH_MS = 5_000;
/** First and longest pause before reading again events that an older open transaction holds back. */
const HELD_BACK_FIRST_MS = 10;
const HELD_BACK_MAX_MS = 1_000;

/**
 * One open `GET /events/stream`. The store is the source of truth: a commit only wakes the stream (through
 * the hub), which then reads the events committed after its position, in commit order (`Store.readNewEvents`: id order on
 * SQLite, `(tx, id)` on PostgreSQL, where an event that committed late is never skipped).
 *
 * Memory stays bounded: at most `bufferBytes` (plus one chunk of messages) wait in the socket's buffer; past that the
 * stream stops reading until the client drains it, and a client that does not within `stallTimeoutMs` is
 * cut off with a final `cutoff` message naming the last event id it was sent.
 */
export class EventStream {
  /** Where the next read starts: past every event sent or passed over by the filter. */
  private position: StreamPosition;
  /** What a client resumes from: the id of the last event sent, or where the stream started. */
  private lastEventId: string;
  private heldBackTimer: NodeJS.Timeout | null = null;
  private heldBackMs = HELD_BACK_FIRST_MS;
  private reading = false;
  private wakeScheduled = false;
  private readAgain = false;
  private ended = false;
  private readonly heartbeat: NodeJS.Timeout;
  /** The most bytes seen waiting in the response's buffers after a write. */
  peakBufferedBytes = 0;

  constructor(
    private readonly res: ServerResponse,
    private readonly options: EventStreamOptions,
  ) {
    this.position = options.start;
    this.lastEventId = positionText(options.start);
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      // Proxies such as nginx would otherwise hold messages back.
      'x-accel-buffering': 'no',
    });
    res.flushHeaders();
    // `ready` says where the stream starts (its SSE id too), so a client that reconnects before any event misses none.
    this.write(`retry: ${RECONNECT_MS}\n\nid: ${this.lastEventId}\nevent: ready\ndata: ${JSON.stringify({ lastEventId: this.lastEventId })}\n\n`);
    // Heartbeats keep proxies from closing an idle stream; re-reading then catches any wake that was missed.
    this.heartbeat = setInterval(() => {
      this.write(': heartbeat\n\n');
      this.wake();
    }, options.settings.heartbeatMs);
    res.on('close', () => this.end('client_closed'));
    this.wake();
  }

  /** Reads and sends what has been stored since, on the next turn of the event loop. */
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
    const { reads, filter, includeBody, settings } = this.options;
    do {
      this.readAgain = false;
      for (;;) {
        const { chunks, full, position, heldBack } = await reads.read(filter, this.position, includeBody);
        for (const chunk of chunks) {
          if (this.ended) return;
          if (this.waitingBytes() >= settings.bufferBytes && !(await this.drained())) {
            if (!this.ended) this.finish('cut_off', { code: 'stream_overflow', message: `The client did not keep up (more than ${settings.bufferBytes} bytes waiting for ${settings.stallTimeoutMs} ms); reconnect with Last-Event-ID to resume.` });
            return;
          }
          if (this.ended) return;
          this.write(chunk.bytes);
          this.lastEventId = String(chunk.lastId);
        }
        if (this.ended) return;
        this.position = position;
        if (!full) {
          this.readLaterIf(heldBack);
          break;
        }
      }
    } while (this.readAgain && !this.ended);
  }

  /**
   * Events held back by an older open transaction (PostgreSQL) become readable when it ends, which nothing
   * announces when it stored no event: read again after a pause that grows while they stay held back.
   */
  private readLaterIf(heldBack: boolean): void {
    if (!heldBack) {
      this.heldBackMs = HELD_BACK_FIRST_MS;
      return;
    }
    if (this.heldBackTimer) return;
    this.heldBackTimer = setTimeout(() => {
      this.heldBackTimer = null;
      this.wake();
    }, this.heldBackMs);
    this.heldBackMs = Math.min(this.heldBackMs * 2, HELD_BACK_MAX_MS);
  }

  /**
   * Resolves true when the client has taken enough of what was waiting (below `bufferBytes`), false when it did
   * not in time (or left). Checked on every drain of the response or its socket, and every 25 ms: some Node.js
   * versions report no need to drain while the response's own buffer is full, so no 'drain' would come.
   */
  private drained(): Promise<boolean> {
    const { bufferBytes, stallTimeoutMs } = this.options.settings;
    if (this.waitingBytes() < bufferBytes) return Promise.resolve(true);
    const socket = this.res.socket;
    return new Promise((resolve) => {
      const done = (ok: boolean): void => {
        clearTimeout(timer);
        clearInterval(poll);
        this.res.off('drain', check);
        socket?.off('drain', check);
        this.res.off('close', onClose);
        resolve(ok);
      };
      const check = (): void => {
        if (this.waitingBytes() < bufferBytes) done(true);
      };
      const onClose = (): void => done(false);
      const timer = setTimeout(() => done(false), stallTimeoutMs);
      const poll = setInterval(check, 25);
      this.res.on('drain', check);
      socket?.on('drain', check);
      this.res.on('close', onClose);
    });
  }

  /** Bytes written and not yet taken by the client: the response's buffer or, where writes go to it, the socket's. */
  private waitingBytes(): number {
    return Math.max(this.res.writableLength, this.res.socket?.writableLength ?? 0);
  }

  private write(data: string | Buffer): void {
    if (this.ended || this.res.writableEnded) return;
    this.res.write(data);
    this.peakBufferedBytes = Math.max(this.peakBufferedBytes, this.res.writableLength);
  }

  /** Sends a final `end` message, ends the response, and destroys the socket if the client never takes it. */
  private finish(reason: StreamEndReason, message: { code: string; message: string }): void {
    if (this.ended) return;
    this.write(`event: end\ndata: ${JSON.stringify({ ...message, lastEventId: this.lastEventId })}\n\n`);
    this.end(reason);
    this.res.end();
    setTimeout(() => this.res.destroy(), FINAL_FLUSH_MS).unref();
  }

  private end(reason: StreamEndReason): void {
    if (this.ended) return;
    this.ended = true;
    clearInterval(this.heartbeat);
    if (this.heldBackTimer) clearTimeout(this.heldBackTimer);
    this.options.onEnd(this, reason);
  }
}
