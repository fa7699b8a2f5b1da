/**
 * The spec's timestamp format: ISO 8601 with milliseconds and an explicit UTC offset,
 * e.g. `2026-11-22T14:19:22.123+00:00` (not the `Z` suffix `toISOString` gives).
 */
export function formatTimestamp(date: Date): string {
  return date.toISOString().replace(/Z$/, '+00:00');
}

/** A clock that never goes backwards, so `createdAt ≤ paymentCompletedAt ≤ transferCompletedAt` always holds. */
export function createMonotonicClock(now: () => number = Date.now): () => Date {
  let last = 0;
  return () => {
    last = Math.max(last, now());
    return new Date(last);
  };
}
