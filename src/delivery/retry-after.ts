/** A Retry-After beyond this is treated as this: a receiver must not park a delivery for weeks. */
export const MAX_RETRY_AFTER_MS = 24 * 60 * 60 * 1000;

const DELAY_SECONDS = /^\s*(\d+)\s*$/;

/**
 * Milliseconds from `now` that a `Retry-After` header asks us to wait: delay-seconds or an HTTP-date,
 * clamped to [0, maxMs]. Undefined when absent or unreadable (then the schedule alone decides).
 */
export function parseRetryAfter(value: string | undefined, now: number, maxMs = MAX_RETRY_AFTER_MS): number | undefined {
  if (value === undefined) return undefined;
  const seconds = DELAY_SECONDS.exec(value);
  let delayMs: number;
  if (seconds) {
    delayMs = Number(seconds[1]) * 1000;
  } else {
    // An HTTP-date always names a weekday or month; this keeps Date.parse from reading "12" as a year.
    if (!/[a-z]/i.test(value)) return undefined;
    const at = Date.parse(value);
    if (Number.isNaN(at)) return undefined;
    delayMs = at - now;
  }
  return Math.min(Math.max(delayMs, 0), maxMs);
}
