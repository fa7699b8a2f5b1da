/**
 * Where a store reads "now": given once at construction, so every method takes the same time and a test can
 * move time instead of waiting for it.
 */
export interface Clock {
  /** Unix ms. */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };
