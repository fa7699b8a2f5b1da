import { describe, expect, it } from 'vitest';
import { nextAttemptDelay } from '../../../src/delivery/retry-schedule.js';
import { parseDuration } from '../../../src/duration.js';
import { DEFAULT_RETRY_SCHEDULE } from '../../../src/rules/schema.js';

const S = 1000;
const M = 60 * S;
const H = 60 * M;
const mid = (): number => 0.5; // no jitter
const low = (): number => 0; // -20 %
const high = (): number => 0.999_999; // just under +20 %
const DEFAULT_RETRY_SCHEDULE_MS = DEFAULT_RETRY_SCHEDULE.map((step) => parseDuration(step));

describe('DEFAULT_RETRY_SCHEDULE', () => {
  it('is immediate, 5s, 5m, 30m, 2h, 5h, 10h, 10h', () => {
    expect(DEFAULT_RETRY_SCHEDULE_MS).toEqual([0, 5 * S, 5 * M, 30 * M, 2 * H, 5 * H, 10 * H, 10 * H]);
  });
});

describe('nextAttemptDelay', () => {
  const schedule = DEFAULT_RETRY_SCHEDULE_MS;
  it.each([
    // [attempt that failed, random, retryAfterMs, expected]
    [1, mid, undefined, 5 * S],
    [1, low, undefined, 4 * S],
    [1, high, undefined, 6 * S],
    [2, mid, undefined, 5 * M],
    [3, mid, undefined, 30 * M],
    [4, low, undefined, 96 * M],
    [5, mid, undefined, 5 * H],
    [6, low, undefined, 8 * H],
    [7, mid, undefined, 10 * H],
    [8, mid, undefined, null], // eight attempts made: exhausted
    [9, mid, undefined, null],
    [8, mid, 1000, null], // Retry-After cannot extend an exhausted schedule
    [1, mid, 60 * S, 60 * S], // Retry-After longer than the step wins
    [1, high, 2 * S, 6 * S], // shorter one does not shorten it
    [1, mid, 48 * H, 24 * H], // capped
    [1, mid, 0, 5 * S],
  ] as const)('attempt %i failed (random %o, Retry-After %o) → %o', (attemptNumber, random, retryAfterMs, expected) => {
    const input = retryAfterMs === undefined ? { attemptNumber, scheduleMs: schedule, random } : { attemptNumber, scheduleMs: schedule, random, retryAfterMs };
    expect(nextAttemptDelay(input)).toBe(expected);
  });

  it('keeps jittered delays within ±20 % of the step', () => {
    for (let i = 0; i < 1000; i += 1) {
      const delay = nextAttemptDelay({ attemptNumber: 2, scheduleMs: schedule, random: Math.random });
      expect(delay).toBeGreaterThanOrEqual(4 * M);
      expect(delay).toBeLessThanOrEqual(6 * M);
    }
  });

  it('honours a custom schedule and jitter ratio', () => {
    expect(nextAttemptDelay({ attemptNumber: 1, scheduleMs: [0, 1000], random: low, jitterRatio: 0 })).toBe(1000);
    expect(nextAttemptDelay({ attemptNumber: 1, scheduleMs: [0, 1000], random: low, jitterRatio: 0.5 })).toBe(500);
    expect(nextAttemptDelay({ attemptNumber: 2, scheduleMs: [0, 1000], random: low })).toBeNull();
    expect(nextAttemptDelay({ attemptNumber: 1, scheduleMs: [0], random: low })).toBeNull();
  });

  it('rejects attempt numbers below 1', () => {
    expect(() => nextAttemptDelay({ attemptNumber: 0, scheduleMs: schedule, random: mid })).toThrow(RangeError);
    expect(() => nextAttemptDelay({ attemptNumber: 1.5, scheduleMs: schedule, random: mid })).toThrow(RangeError);
  });
});
