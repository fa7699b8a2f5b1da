import type { ServerResponse } from 'node:http';
import { HookrelayError } from '../../../errors.js';
import { EventStream, type EventStreamOptions, type StreamEndReason, type StreamSettings } from './event-stream.js';
import { SharedReads } from './shared-reads.js';

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

/** The open event streams: the cap on how many, the shutdown that ends them all, and their figures. */
export class StreamHub {
  private readonly streams = new Set<EventStream>();
  private closing = false;
  private cutOff = 0;
  private peakBufferedBytes = 0;
  private reads: SharedReads | null = null;

  constructor(readonly settings: StreamHubSettings) {}

  /** Throws unless one more stream may open now; call it before anything is written. */
  checkRoom(): void {
    if (this.closing) throw new HookrelayError('shutting_down', 'The server is shutting down.');
    if (this.streams.size >= this.settings.max) {
      throw new HookrelayError('too_many_streams', `${this.settings.max} event streams are open, the most this server allows (admin.streams.max); retry later.`);
    }
  }

  open(res: ServerResponse, options: Omit<EventStreamOptions, 'settings' | 'onEnd' | 'reads'>): EventStream {
    this.checkRoom();
    // Created before the first stream subscribes, so a commit clears shared reads before it wakes any stream.
    this.reads ??= new SharedReads(options.store);
    const stream = new EventStream(res, { ...options, reads: this.reads, settings: this.settings, onEnd: (ended, reason) => this.forget(ended, reason) });
    this.streams.add(stream);
    return stream;
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
    this.reads?.close();
  }

  private forget(stream: EventStream, reason: StreamEndReason): void {
    if (!this.streams.delete(stream)) return;
    if (reason === 'cut_off') this.cutOff += 1;
    this.peakBufferedBytes = Math.max(this.peakBufferedBytes, stream.peakBufferedBytes);
  }
}
