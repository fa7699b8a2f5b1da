export const DEFAULT_DESTINATION_CONCURRENCY = 10;

export interface DestinationLimits {
  /** Attempts in flight at once to this destination. Default 10. */
  concurrency?: number;
  /** Attempts started per second (token bucket, bursts up to one second's worth). Unlimited when absent. */
  ratePerSecond?: number;
}

/** Call once when the attempt finishes; later calls do nothing. */
export type ReleaseSlot = () => void;

export interface DestinationLimiter {
  /** A slot for one attempt now, or null when the destination is at its limit (leave the row due; try later). */
  tryAcquire(destination: string, limits?: DestinationLimits): ReleaseSlot | null;
  inFlight(destination: string): number;
}

/** Limits are per origin (scheme, host, port): paths on one server share its capacity. */
export function destinationKey(url: string): string {
  return new URL(url).origin;
}

interface DestinationState {
  inFlight: number;
  tokens: number;
  refilledAt: number;
}

/**
 * Non-blocking per-destination limits, so one slow or strict endpoint cannot occupy every worker slot.
 * Pure apart from the injected clock.
 */
export function createDestinationLimiter(options: { now?: () => number } = {}): DestinationLimiter {
  const now = options.now ?? Date.now;
  const states = new Map<string, DestinationState>();

  function refill(state: DestinationState, ratePerSecond: number, at: number): void {
    const capacity = Math.max(1, ratePerSecond);
    state.tokens = Math.min(capacity, state.tokens + ((at - state.refilledAt) * ratePerSecond) / 1000);
    state.refilledAt = at;
  }

  function tryAcquire(destination: string, limits: DestinationLimits = {}): ReleaseSlot | null {
    const concurrency = limits.concurrency ?? DEFAULT_DESTINATION_CONCURRENCY;
    const rate = limits.ratePerSecond;
    const at = now();
    let state = states.get(destination);
    if (!state) {
      state = { inFlight: 0, tokens: Math.max(1, rate ?? 1), refilledAt: at };
      states.set(destination, state);
    }
    if (state.inFlight >= concurrency) return null;
    if (rate !== undefined) {
      refill(state, rate, at);
      if (state.tokens < 1) return null;
      state.tokens -= 1;
    }
    state.inFlight += 1;

    const held = state;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      held.inFlight -= 1;
      // Forget idle unthrottled destinations so the map does not grow with every origin ever seen.
      if (held.inFlight === 0 && rate === undefined && states.get(destination) === held) states.delete(destination);
    };
  }

  return {
    tryAcquire,
    inFlight: (destination) => states.get(destination)?.inFlight ?? 0,
  };
}
