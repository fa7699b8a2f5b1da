/**
 * Keeps one attempt's lease alive: when half the lease is left it asks the store to extend it, and when the
 * lease cannot be renewed (another claim took the row, or the store does not answer in time) it calls
 * `onLost` while a quarter of the lease is still left, so the attempt is abandoned before the lease can
 * expire under it and a second attempt of the same delivery (or of its key) could start elsewhere.
 */
export interface LeaseRenewalOptions {
  leaseMs: number;
  /** When the current lease ends, in the worker's clock. */
  leaseEnd: number;
  /** Extends the lease to `leaseMs` from now; false when it is no longer ours. */
  renew: () => Promise<boolean>;
  onLost: (reason: string) => void;
  now: () => number;
}

export function startLeaseRenewal(options: LeaseRenewalOptions): () => void {
  const { leaseMs, renew, onLost, now } = options;
  let leaseEnd = options.leaseEnd;
  let stopped = false;
  let renewTimer: NodeJS.Timeout | undefined;
  let deadlineTimer: NodeJS.Timeout | undefined;
  const margin = leaseMs / 4;

  const lose = (reason: string): void => {
    if (stopped) return;
    stop();
    onLost(reason);
  };
  const schedule = (): void => {
    clearTimeout(renewTimer);
    clearTimeout(deadlineTimer);
    renewTimer = setTimeout(tick, Math.max(0, leaseEnd - leaseMs / 2 - now()));
    // Whatever renewal is doing (a store that hangs included), the attempt stops while the lease still holds.
    deadlineTimer = setTimeout(() => lose('lease could not be renewed in time'), Math.max(0, leaseEnd - margin - now()));
  };
  const tick = (): void => {
    if (stopped) return;
    const startedAt = now();
    renew().then(
      (kept) => {
        if (stopped) return;
        if (!kept) return lose('lease lost to another claim');
        leaseEnd = startedAt + leaseMs;
        schedule();
      },
      () => {
        // The store failed: try again soon; the deadline timer still stands.
        if (!stopped) renewTimer = setTimeout(tick, Math.max(1, Math.min(1_000, leaseMs / 10)));
      },
    );
  };
  const stop = (): void => {
    stopped = true;
    clearTimeout(renewTimer);
    clearTimeout(deadlineTimer);
  };
  schedule();
  return stop;
}
