/**
 * An additive-increase / multiplicative-decrease concurrency limit for one destination, as TCP congestion
 * control and adaptive concurrency limiters (Netflix concurrency-limits' AIMD limit) do: every healthy
 * answer while the limit is in use adds one slot, and overload halves it, once per round trip as TCP
 * does: the attempts that were already in flight when it was halved do not halve it again (a pause of
 * this process's own event loop makes all of them look slow at once).
 * Pure: the state goes in with a sample and the next state comes out.
 */

/** What one finished attempt says about its destination. */
export interface LimitSample {
  /** Time from request sent to response read (or failure). */
  durationMs: number;
  /**
   * `ok`: the destination answered (2xx, or a verdict such as 4xx that a pause would not change).
   * `overload`: 429, 5xx, timeout or network error: the destination is struggling.
   */
  outcome: 'ok' | 'overload';
  /** Attempts to this destination in flight when this one finished, itself included. */
  inFlight: number;
  /** When the attempt started and finished (ms, any clock the caller keeps). */
  startedAt: number;
  finishedAt: number;
}

export interface AdaptiveLimitSettings {
  /** The ceiling: the limit never rises above it. */
  max: number;
  /** Fraction kept on an overloaded or slow sample (at most once per round trip). */
  backoffRatio: number;
  /** A sample slower than this many times the usual latency counts as overload. */
  slowFactor: number;
  /** ...and only when it is also at least this many milliseconds slower (sub-millisecond jitter is not overload). */
  slowMarginMs: number;
  /** Weight of one sample in the usual latency (exponential moving average). */
  latencyWeight: number;
}

export const DEFAULT_ADAPTIVE_SETTINGS: Omit<AdaptiveLimitSettings, 'max'> = {
  backoffRatio: 0.5,
  slowFactor: 2,
  slowMarginMs: 50,
  latencyWeight: 0.05,
};

/**
 * A destination not seen before starts at half its ceiling: room for a burst at once (a row refused by the
 * limit waits a few hundred ms before it is looked at again), and a limit that still has room to rise.
 */
export function initialLimit(max: number): number {
  return Math.max(1, Math.floor(max / 2));
}

export interface AdaptiveLimitState {
  /** Fractional: decreases are proportional, and the usable limit is its floor. */
  limit: number;
  /** Usual latency of healthy answers (ms), or null before the first one. */
  usualLatencyMs: number | null;
  /** When the limit was last decreased; attempts started before then do not decrease it again. */
  decreasedAt: number;
}

export function initialLimitState(max: number): AdaptiveLimitState {
  return { limit: initialLimit(max), usualLatencyMs: null, decreasedAt: -Infinity };
}

/** Attempts that may be in flight at once under this state (never below 1). */
export function usableLimit(state: AdaptiveLimitState, max: number): number {
  return Math.max(1, Math.min(max, Math.floor(state.limit)));
}

function isSlow(durationMs: number, usualLatencyMs: number | null, settings: AdaptiveLimitSettings): boolean {
  if (usualLatencyMs === null) return false;
  return durationMs > usualLatencyMs * settings.slowFactor && durationMs > usualLatencyMs + settings.slowMarginMs;
}

/**
 * The state after one sample. Overload or a slow answer multiplies the limit by `backoffRatio` (unless the
 * attempt started before the last decrease: it carries no news); a healthy
 * answer adds one, but only while at least half the limit is in use (a destination that is sent little
 * proves nothing about more). Always within [1, max].
 */
export function nextLimitState(state: AdaptiveLimitState, sample: LimitSample, settings: AdaptiveLimitSettings): AdaptiveLimitState {
  if (sample.outcome === 'overload') return decreased(state, sample, settings, state.usualLatencyMs);
  // A slow answer still moves the usual latency, a little: a destination that stays slower settles at its new pace.
  const usualLatencyMs = movingAverage(state.usualLatencyMs, sample.durationMs, settings.latencyWeight);
  if (isSlow(sample.durationMs, state.usualLatencyMs, settings)) return decreased(state, sample, settings, usualLatencyMs);
  const inUse = sample.inFlight * 2 >= Math.floor(state.limit);
  return { limit: clamp(inUse ? state.limit + 1 : state.limit, settings), usualLatencyMs, decreasedAt: state.decreasedAt };
}

function decreased(state: AdaptiveLimitState, sample: LimitSample, settings: AdaptiveLimitSettings, usualLatencyMs: number | null): AdaptiveLimitState {
  if (sample.startedAt < state.decreasedAt) return { limit: state.limit, usualLatencyMs, decreasedAt: state.decreasedAt };
  return { limit: clamp(state.limit * settings.backoffRatio, settings), usualLatencyMs, decreasedAt: sample.finishedAt };
}

function clamp(limit: number, settings: AdaptiveLimitSettings): number {
  return Math.max(1, Math.min(settings.max, limit));
}

function movingAverage(current: number | null, value: number, weight: number): number {
  return current === null ? value : current + (value - current) * weight;
}

// Errors that say nothing about the destination's load: a shutdown, or an attempt never sent.
const NOT_THE_DESTINATION = new Set(['aborted', 'destination_refused', 'invalid_url', 'ERR_INVALID_URL', 'UND_ERR_INVALID_ARG']);

/** How an attempt's answer counts for its destination's limit, or null when it says nothing about it. */
export function sampleOutcome(status: number | undefined, errorCode: string | undefined): LimitSample['outcome'] | null {
  if (status !== undefined) return status === 408 || status === 429 || status >= 500 ? 'overload' : 'ok';
  return errorCode !== undefined && NOT_THE_DESTINATION.has(errorCode) ? null : 'overload';
}
