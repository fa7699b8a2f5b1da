import { DEFAULT_ADAPTIVE_SETTINGS, initialLimitState, nextLimitState, usableLimit, type AdaptiveLimitSettings, type AdaptiveLimitState, type LimitSample } from './adaptive-limit.js';

/**
 * The default ceiling of attempts in flight per destination: room for a healthy destination's burst. At
 * 1,000 events/s to a destination answering in 100 ms, 100 attempts are in flight on average, and bursts
 * (a batch claimed at once, a pause of the event loop) need as many again.
 */
export const DEFAULT_DESTINATION_CONCURRENCY = 256;

export interface DestinationLimits {
  /** The ceiling of attempts in flight at once to this destination. Default 256. */
  concurrency?: number;
  /** Attempts started per second (token bucket, bursts up to one second's worth). Unlimited when absent. */
  ratePerSecond?: number;
}

/** What the finished attempt says about the destination; omitted when it says nothing (refused, aborted). */
export type AttemptSample = Pick<LimitSample, 'outcome' | 'durationMs'>;

/** Call once when the attempt finishes; later calls do nothing. */
export type ReleaseSlot = (sample?: AttemptSample) => void;

/** One destination as the limiter sees it now. */
export interface DestinationView {
  destination: string;
  /** Attempts that may be in flight at once now: the adaptive limit within the ceiling (the ceiling itself when not adaptive). */
  limit: number;
  /** The highest ceiling of the rules attempted here (a rule with a lower one stops at its own). */
  ceiling: number;
  inFlight: number;
}

export interface DestinationLimiter {
  /** A slot for one attempt now, or null when the destination is at its limit (give the row back: `nextTurn`). */
  tryAcquire(destination: string, limits?: DestinationLimits): ReleaseSlot | null;
  /**
   * When a row `tryAcquire` just refused should be looked at again: its turn in the destination's line, after
   * the turns given before. Turns under a rate are one token apart; under the concurrency limit half the time
   * in which the destination frees a slot (its usual latency over its limit): rows come back twice as fast as
   * it takes them, and those that find no slot wait for one in memory or take a later turn (a turn too late
   * would leave the destination idle). At least MIN_TURN_WAIT_MS and at most MAX_TURN_WAIT_MS away.
   * A backlog waiting for a slow or rate-limited destination is then claimed about once more per row, not
   * every few hundred milliseconds. Null when not known: no answer from the destination yet, or its
   * latency is not followed (`adaptive: false`).
   */
  nextTurn(destination: string, limits?: DestinationLimits): number | null;
  /**
   * How many refused rows are worth holding for the destination's next free slots: what it takes within
   * MIN_TURN_WAIT_MS, the nearest turn (at least its attempts in flight: one round), so a fast destination is
   * not left idle until the rows given back come again.
   */
  rowsWorthHolding(destination: string, limits?: DestinationLimits): number;
  inFlight(destination: string): number;
  /** Every destination attempted recently, in first-seen order. */
  destinations(): DestinationView[];
}

/** Limits are per origin (scheme, host, port): paths on one server share its capacity. */
export function destinationKey(url: string): string {
  return new URL(url).origin;
}

function adaptiveSettings(max: number): AdaptiveLimitSettings {
  return { ...DEFAULT_ADAPTIVE_SETTINGS, max };
}

/** Idle destinations beyond this many are forgotten, oldest first (destinations come from rules: few). */
const MAX_TRACKED_DESTINATIONS = 1_000;

/** The nearest turn of a refused row. */
export const MIN_TURN_WAIT_MS = 200;
/**
 * The farthest turn: rows behind a longer line come back then and queue again. Bounds how long a row waits
 * for a turn that a rule edit (a higher limit) or a faster destination has made too late.
 */
export const MAX_TURN_WAIT_MS = 60_000;

interface DestinationState {
  inFlight: number;
  tokens: number;
  refilledAt: number;
  /** The highest ceiling seen here: what the adaptive limit is bounded by. */
  ceiling: number;
  adaptive: AdaptiveLimitState;
  /** The adaptive limit's settings for this ceiling: made when the ceiling changes, not at every attempt. */
  settings: AdaptiveLimitSettings;
  /** The next free turn of a refused row (ms). */
  turnAt: number;
}

export interface DestinationLimiterOptions {
  now?: () => number;
  /** Adapt the limit to each destination's latency and errors (default); false pins it at the ceiling. */
  adaptive?: boolean;
}

/**
 * Non-blocking per-destination limits, so one slow or strict endpoint cannot occupy every worker slot.
 * The concurrency limit adapts (see adaptive-limit.ts) below the ceiling the attempt's rule allows; the
 * rate is a hard cap. State is in memory: each node limits its own attempts.
 */
export function createDestinationLimiter(options: DestinationLimiterOptions = {}): DestinationLimiter {
  const now = options.now ?? Date.now;
  const adaptive = options.adaptive ?? true;
  const states = new Map<string, DestinationState>();

  function refill(state: DestinationState, ratePerSecond: number, at: number): void {
    const capacity = Math.max(1, ratePerSecond);
    state.tokens = Math.min(capacity, state.tokens + ((at - state.refilledAt) * ratePerSecond) / 1000);
    state.refilledAt = at;
  }

  function forgetIdle(): void {
    for (const [destination, state] of states) {
      if (states.size <= MAX_TRACKED_DESTINATIONS) return;
      if (state.inFlight === 0) states.delete(destination);
    }
  }

  function limitOf(state: DestinationState, ceiling = state.ceiling): number {
    return adaptive ? usableLimit(state.adaptive, ceiling) : ceiling;
  }

  function tryAcquire(destination: string, limits: DestinationLimits = {}): ReleaseSlot | null {
    const ceiling = limits.concurrency ?? DEFAULT_DESTINATION_CONCURRENCY;
    const rate = limits.ratePerSecond;
    const at = now();
    let state = states.get(destination);
    if (!state) {
      state = {
        inFlight: 0, tokens: Math.max(1, rate ?? 1), refilledAt: at, ceiling, adaptive: initialLimitState(ceiling), settings: adaptiveSettings(ceiling),
        turnAt: 0,
      };
      states.set(destination, state);
      forgetIdle();
    }
    if (ceiling > state.ceiling) {
      state.ceiling = ceiling;
      state.settings = adaptiveSettings(ceiling);
    }
    // Several rules may share a destination: each attempt stops at the lower of the shared adaptive limit and its own rule's ceiling.
    if (state.inFlight >= limitOf(state, ceiling)) return null;
    if (rate !== undefined) {
      refill(state, rate, at);
      if (state.tokens < 1) return null;
      state.tokens -= 1;
    }
    state.inFlight += 1;

    const held = state;
    const startedAt = at;
    let released = false;
    return (sample) => {
      if (released) return;
      released = true;
      if (sample && adaptive) {
        const observed: LimitSample = { outcome: sample.outcome, durationMs: sample.durationMs, inFlight: held.inFlight, startedAt, finishedAt: now() };
        held.adaptive = nextLimitState(held.adaptive, observed, held.settings);
      }
      held.inFlight -= 1;
    };
  }

  /** The destination's usual answer time, or null before its first answer or when no latency is followed. */
  function latencyOf(state: DestinationState): number | null {
    return adaptive ? state.adaptive.usualLatencyMs : null;
  }

  function nextTurn(destination: string, limits: DestinationLimits = {}): number | null {
    const state = states.get(destination);
    if (!state) return null;
    const at = now();
    const rate = limits.ratePerSecond;
    const limit = limitOf(state, limits.concurrency ?? DEFAULT_DESTINATION_CONCURRENCY);
    let earliest = at + MIN_TURN_WAIT_MS;
    let spacing: number;
    if (state.inFlight >= limit) {
      const latency = latencyOf(state);
      if (latency === null) return null;
      spacing = latency / limit / 2;
    } else if (rate !== undefined) {
      spacing = 1000 / rate;
      earliest = Math.max(earliest, at + (1 - state.tokens) * spacing);
    } else {
      return null;
    }
    const turn = Math.min(Math.max(state.turnAt, earliest), at + MAX_TURN_WAIT_MS);
    state.turnAt = turn + spacing;
    return turn;
  }

  function rowsWorthHolding(destination: string, limits: DestinationLimits = {}): number {
    const state = states.get(destination);
    if (!state) return 0;
    const latency = latencyOf(state);
    const limit = limitOf(state, limits.concurrency ?? DEFAULT_DESTINATION_CONCURRENCY);
    const inTurnWait = latency === null ? 0 : Math.floor((limit * MIN_TURN_WAIT_MS) / Math.max(1, latency));
    return Math.max(state.inFlight, inTurnWait);
  }

  return {
    tryAcquire,
    nextTurn,
    rowsWorthHolding,
    inFlight: (destination) => states.get(destination)?.inFlight ?? 0,
    destinations: () => [...states].map(([destination, state]) => ({ destination, limit: limitOf(state), ceiling: state.ceiling, inFlight: state.inFlight })),
  };
}
