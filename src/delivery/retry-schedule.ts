import { MAX_RETRY_AFTER_MS } from './retry-after.js';

/** Each delay is spread over ±20 % so retries after an outage do not arrive as one wave. */
export const DEFAULT_JITTER_RATIO = 0.2;

export interface NextAttemptDelayInput {
  /** 1-based number of the attempt that just failed. */
  attemptNumber: number;
  scheduleMs: readonly number[];
  /** From the response's Retry-After (already capped by `parseRetryAfter`). */
  retryAfterMs?: number;
  /** Returns [0, 1); inject for deterministic tests. */
  random: () => number;
  jitterRatio?: number;
}

/**
 * Milliseconds to wait before the attempt after `attemptNumber`, or null when the schedule is exhausted
 * (dead-letter). Proportional jitter (base × [1 − r, 1 + r)) rather than full or equal jitter, so a
 * 10 h step never fires after minutes; a Retry-After then raises the delay to at least what it asks.
 */
export function nextAttemptDelay(input: NextAttemptDelayInput): number | null {
  if (!Number.isInteger(input.attemptNumber) || input.attemptNumber < 1) {
    throw new RangeError(`attemptNumber must be an integer >= 1, got ${input.attemptNumber}`);
  }
  const base = input.scheduleMs[input.attemptNumber];
  if (base === undefined) return null;
  const ratio = input.jitterRatio ?? DEFAULT_JITTER_RATIO;
  const jittered = Math.round(base * (1 - ratio + 2 * ratio * input.random()));
  const floor = Math.min(input.retryAfterMs ?? 0, MAX_RETRY_AFTER_MS);
  return Math.max(jittered, floor, 0);
}
