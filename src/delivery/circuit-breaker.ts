export interface CircuitBreakerOptions {
  /** Consecutive failed attempts that pause a destination. Default 5. */
  failureThreshold?: number;
  /** First pause; doubles with each pause in a row. Default 30 s. */
  coolDownMs?: number;
  /** Longest pause. Default 30 min. */
  maxCoolDownMs?: number;
}

/** What `beginAttempt` lets happen: an attempt as usual, the one probe after a pause, or none (held). */
export type CircuitPass = 'pass' | 'probe' | 'held';

export interface CircuitBreaker {
  /**
   * True while the destination is paused, or its probe is in flight: leave its rows due (do not attempt, do
   * not count an attempt).
   */
  isOpen(destination: string, now: number): boolean;
  /**
   * Called just before an attempt is sent. After a pause the first attempt is the probe, and every other one
   * is held until the probe's outcome: a destination that comes back meets one attempt, not its backlog.
   */
  beginAttempt(destination: string, now: number): CircuitPass;
  /** The probe ended without saying anything of the destination (aborted, refused, sent again at once). */
  probeEnded(destination: string): void;
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
  /** When the probe in flight started; null when none is. */
  probeSince: number | null;
}

/**
 * A probe whose outcome never came (its attempt ended without telling, which the worker does not do) stops
 * holding the others after this long: the longest a rule's timeout can be, and then some.
 */
const PROBE_LOST_AFTER_MS = 10 * 60_000;

/**
 * Pauses a failing destination so its due rows stop consuming attempts and worker slots; nothing is
 * dropped. After the pause the next attempt is a probe, alone (half-open): success closes the circuit,
 * failure pauses again for twice as long (up to the maximum). Pure apart from the times passed in.
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

  /** Paused, or its probe in flight. */
  function isOpen(destination: string, now: number): boolean {
    const state = states.get(destination);
    if (!state) return false;
    return now < state.openUntil || (state.probeSince !== null && now - state.probeSince < PROBE_LOST_AFTER_MS);
  }

  function beginAttempt(destination: string, now: number): CircuitPass {
    if (isOpen(destination, now)) return 'held';
    const state = states.get(destination);
    // Closed, or failing but not yet paused: attempts go as usual.
    if (!state || state.openUntil === 0) return 'pass';
    state.probeSince = now;
    return 'probe';
  }

  function probeEnded(destination: string): void {
    const state = states.get(destination);
    if (state) state.probeSince = null;
  }

  function recordFailure(destination: string, now: number): number | null {
    const state = states.get(destination) ?? { failingSince: now, consecutiveFailures: 0, pausesInARow: 0, openUntil: 0, probeSince: null };
    states.set(destination, state);
    // Attempts that were already in flight when the circuit opened do not extend the pause.
    if (now < state.openUntil) return null;
    state.probeSince = null;
    state.consecutiveFailures += 1;
    if (state.consecutiveFailures < threshold) return null;
    const pause = Math.min(maxCoolDownMs, coolDownMs * 2 ** state.pausesInARow);
    state.pausesInARow += 1;
    state.openUntil = now + pause;
    return state.pausesInARow === 1 ? state.failingSince : null;
  }

  return {
    isOpen,
    beginAttempt,
    probeEnded,
    reopensAt,
    recordSuccess: (destination) => void states.delete(destination),
    recordFailure,
  };
}
