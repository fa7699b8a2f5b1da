export interface CircuitBreakerOptions {
  /** Consecutive failed attempts that pause a destination. Default 5. */
  failureThreshold?: number;
  /** First pause; doubles with each pause in a row. Default 30 s. */
  coolDownMs?: number;
  /** Longest pause. Default 30 min. */
  maxCoolDownMs?: number;
}

export interface CircuitBreaker {
  /** True while the destination is paused: leave its rows due (do not attempt, do not count an attempt). */
  isOpen(destination: string, now: number): boolean;
  /** When the current pause ends (epoch ms), or null when not paused. */
  reopensAt(destination: string, now: number): number | null;
  /** The destination answered (2xx, or a 4xx verdict): close the circuit and forget its failures. */
  recordSuccess(destination: string): void;
  /**
   * A retryable failure (network error, timeout, 5xx, 429). Returns when the run of failures began if this
   * failure opened the circuit for the first time in that run (an outage starts), else null.
   */
  recordFailure(destination: string, now: number): number | null;
}

interface BreakerState {
  /** When the current run of failures began. */
  failingSince: number;
  consecutiveFailures: number;
  pausesInARow: number;
  openUntil: number;
}

/**
 * Pauses a failing destination so its due rows stop consuming attempts and worker slots; nothing is
 * dropped. After the pause the next attempt is a probe: success closes the circuit, failure pauses
 * again for twice as long (up to the maximum). Pure apart from the times passed in.
 */
export function createCircuitBreaker(options: CircuitBreakerOptions = {}): CircuitBreaker {
  const threshold = options.failureThreshold ?? 5;
  const coolDownMs = options.coolDownMs ?? 30_000;
  const maxCoolDownMs = options.maxCoolDownMs ?? 30 * 60_000;
  const states = new Map<string, BreakerState>();

  function reopensAt(destination: string, now: number): number | null {
    const state = states.get(destination);
    return state && now < state.openUntil ? state.openUntil : null;
  }

  function recordFailure(destination: string, now: number): number | null {
    const state = states.get(destination) ?? { failingSince: now, consecutiveFailures: 0, pausesInARow: 0, openUntil: 0 };
    states.set(destination, state);
    // Attempts that were already in flight when the circuit opened do not extend the pause.
    if (now < state.openUntil) return null;
    state.consecutiveFailures += 1;
    if (state.consecutiveFailures < threshold) return null;
    const pause = Math.min(maxCoolDownMs, coolDownMs * 2 ** state.pausesInARow);
    state.pausesInARow += 1;
    state.openUntil = now + pause;
    return state.pausesInARow === 1 ? state.failingSince : null;
  }

  return {
    isOpen: (destination, now) => reopensAt(destination, now) !== null,
    reopensAt,
    recordSuccess: (destination) => void states.delete(destination),
    recordFailure,
  };
}
