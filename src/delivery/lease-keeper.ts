import { InFlightSet } from '../http/in-flight-set.js';
import type { ClaimedDelivery } from '../store/delivery-queue.js';

/**
 * One attempt in flight under its claim's lease: until when the lease holds, and how to end the attempt
 * early (the worker's shutdown, a lost lease). A plain object rather than an AbortController: one is made
 * per attempt, and an AbortSignal is an EventTarget whose construction and listener cost more than the
 * lease bookkeeping itself. An attempt makes one exchange at a time, so one listener is enough.
 */
export class LeasedAttempt {
  aborted = false;
  /** The attempt is over: the keeper no longer holds its lease. */
  ended = false;
  /** Set while a renewal of this lease is under way. */
  renewing = false;
  private stop: (() => void) | null = null;
  /** Set by the keeper that holds the lease. */
  release: (() => void) | null = null;

  constructor(
    readonly delivery: Pick<ClaimedDelivery, 'id' | 'leaseToken' | 'ruleId'>,
    /** When the lease ends, in the keeper's clock. */
    public leaseEnd: number,
  ) {}

  /** Ends the attempt: its listener (the exchange under way) is told once; every later check sees `aborted`. */
  abort(): void {
    if (this.aborted) return;
    this.aborted = true;
    const stop = this.stop;
    this.stop = null;
    stop?.();
  }

  /** `stop` is called if the attempt is aborted before `forget()`; it replaces an earlier listener. */
  onAbort(stop: () => void): void {
    this.stop = stop;
  }

  forget(): void {
    this.stop = null;
  }

  /** The attempt is over: its lease is no longer kept. */
  end(): void {
    this.ended = true;
    this.stop = null;
    this.release?.();
  }
}

export interface LeaseKeeperOptions {
  /** The length of a claim's lease; a renewal extends it to this from the renewal's start. */
  leaseMs: number;
  /** Extends the attempt's lease by `leaseMs`; false when it is no longer this attempt's. */
  renew: (attempt: LeasedAttempt) => Promise<boolean>;
  /** Told after the keeper aborted an attempt whose lease it could not keep. */
  onLost: (attempt: LeasedAttempt, reason: string) => void;
  now: () => number;
}

/**
 * Keeps the leases of the attempts in flight: when half a lease is left it asks the store to extend it, and
 * when it cannot be extended (another claim took the row, or the store does not answer in time) it aborts
 * the attempt while a quarter of the lease is still left, so no second attempt of the same delivery (or of
 * its key) can start elsewhere while this one runs. One timer for every attempt, looking every eighth of a
 * lease (an attempt is aborted an eighth of its lease before the end at the latest): attempts mostly end in
 * milliseconds against a lease of minutes, and a pair of timers per attempt cost more than its lease is worth.
 */
export class LeaseKeeper {
  private readonly live = new InFlightSet<LeasedAttempt>();
  private timer: NodeJS.Timeout | undefined;
  private readonly sweepMs: number;

  constructor(private readonly options: LeaseKeeperOptions) {
    this.sweepMs = Math.max(1, options.leaseMs / 8);
  }

  /** Keeps `attempt`'s lease until `attempt.end()`. */
  hold(attempt: LeasedAttempt): void {
    if (this.timer === undefined) {
      this.timer = setInterval(() => this.sweep(), this.sweepMs);
      this.timer.unref();
    }
    attempt.release = this.live.add(attempt);
  }

  /** Aborts every attempt held (shutdown). */
  abortAll(): void {
    for (const attempt of this.live) attempt.abort();
  }

  private sweep(): void {
    if (this.live.size === 0) {
      clearInterval(this.timer);
      this.timer = undefined;
      return;
    }
    const { leaseMs } = this.options;
    const now = this.options.now();
    for (const attempt of this.live) {
      if (attempt.aborted) continue;
      // Whatever a renewal is doing (a store that hangs included), the attempt stops while the lease still holds.
      if (now >= attempt.leaseEnd - leaseMs / 4) this.lose(attempt, 'lease could not be renewed in time');
      else if (!attempt.renewing && now >= attempt.leaseEnd - leaseMs / 2) this.renew(attempt, now);
    }
  }

  private renew(attempt: LeasedAttempt, startedAt: number): void {
    attempt.renewing = true;
    this.options.renew(attempt).then(
      (kept) => {
        attempt.renewing = false;
        if (attempt.aborted || attempt.ended) return;
        if (!kept) this.lose(attempt, 'lease lost to another claim');
        else attempt.leaseEnd = startedAt + this.options.leaseMs;
      },
      () => {
        // The store failed: the next sweep tries again; the deadline still stands.
        attempt.renewing = false;
      },
    );
  }

  private lose(attempt: LeasedAttempt, reason: string): void {
    attempt.abort();
    this.options.onLost(attempt, reason);
  }
}
