import type { ServerResponse } from 'node:http';
import { HookrelayError } from '../../../errors.js';
import { EventStream, type EventStreamOptions, type StreamEndReason, type StreamSettings } from './event-stream.js';
import { SharedReads } from './shared-reads.js';
import type { NewEventStore } from '../../../store/new-event-store.js';

/**
 * Commits wake the streams at most this often: under load that is one read and one write per client per
 * gap instead of per group commit (thousands a second), for at most a gap more delay to a message.
 */
const WAKE_GAP_MS = 10;
/**
 * …and, with many streams open, at most once every this many ms per open stream (50 streams: every 50 ms).
 * Each wake costs every stream a socket write on the event loop that acknowledges webhooks: this keeps the
 * writes that commits cause near 1,000 a second in all, however many streams are open, so that watching
 * takes little from receiving.
 */
const WAKE_GAP_PER_STREAM_MS = 1;

/** The shortest time between two wakes of `open` streams. */
export function wakeGapMs(open: number): number {
  return Math.max(WAKE_GAP_MS, open * WAKE_GAP_PER_STREAM_MS);
}

export interface StreamHubSettings extends StreamSettings {
  /** Open streams at once. */
  max: number;
}

export interface StreamStats {
  open: number;
  /** Streams cut off because their client did not keep up, since start. */
  cutOff: number;
  /** The most bytes any stream has had waiting for its client, since start. */
  peakBufferedBytes: number;
}

/**
 * The open event streams: the cap on how many, the shutdown that ends them all, their figures, and the one
 * subscription to the store's commits that wakes them all together (so they share each read).
 */
export class StreamHub {
  private readonly streams = new Set<EventStream>();
  private closing = false;
  private cutOff = 0;
  private peakBufferedBytes = 0;
  private reads: SharedReads | null = null;
  private unsubscribe: (() => void) | null = null;
  private wakeTimer: NodeJS.Timeout | null = null;
  private lastWakeAt = -Infinity;

  constructor(readonly settings: StreamHubSettings) {}

  /** Throws unless one more stream may open now; call it before anything is written. */
  checkRoom(): void {
    if (this.closing) throw new HookrelayError('shutting_down', 'The server is shutting down.');
    if (this.streams.size >= this.settings.max) {
      throw new HookrelayError('too_many_streams', `${this.settings.max} event streams are open, the most this server allows (admin.streams.max); retry later.`);
    }
  }

  open(res: ServerResponse, options: Omit<EventStreamOptions, 'settings' | 'onEnd' | 'reads'> & { store: NewEventStore }): EventStream {
    this.checkRoom();
    const { store, ...streamOptions } = options;
    this.reads ??= new SharedReads(store);
    // Listening only while a stream is open: on PostgreSQL without notifications, listening means polling.
    this.unsubscribe ??= store.onEventsStored(() => this.committed());
    const stream = new EventStream(res, { ...streamOptions, reads: this.reads, settings: this.settings, onEnd: (ended, reason) => this.forget(ended, reason) });
    this.streams.add(stream);
    return stream;
  }

  /** A commit stored events: wake every stream now, or when the gap since the last wake ends. */
  private committed(): void {
    if (this.wakeTimer) return;
    const wait = this.lastWakeAt + wakeGapMs(this.streams.size) - performance.now();
    if (wait <= 0) {
      this.wakeAll();
      return;
    }
    this.wakeTimer = setTimeout(() => {
      this.wakeTimer = null;
      this.wakeAll();
    }, wait);
  }

  private wakeAll(): void {
    this.lastWakeAt = performance.now();
    // Forgotten first, so no stream is handed a read from before the commit that woke it.
    this.reads?.forget();
    for (const stream of this.streams) stream.wake();
  }

  private stopListening(): void {
    this.unsubscribe?.();
    this.unsubscribe = null;
    if (this.wakeTimer) clearTimeout(this.wakeTimer);
    this.wakeTimer = null;
  }

  stats(): StreamStats {
    let peak = this.peakBufferedBytes;
    for (const stream of this.streams) peak = Math.max(peak, stream.peakBufferedBytes);
    return { open: this.streams.size, cutOff: this.cutOff, peakBufferedBytes: peak };
  }

  /** Ends every stream with a final message and refuses new ones (the server is stopping). */
  close(): void {
    this.closing = true;
    for (const stream of [...this.streams]) stream.shutDown();
    this.stopListening();
    this.reads?.forget();
  }

  private forget(stream: EventStream, reason: StreamEndReason): void {
    if (!this.streams.delete(stream)) return;
    if (this.streams.size === 0) this.stopListening();
    if (reason === 'cut_off') this.cutOff += 1;
    this.peakBufferedBytes = Math.max(this.peakBufferedBytes, stream.peakBufferedBytes);
  }
}
