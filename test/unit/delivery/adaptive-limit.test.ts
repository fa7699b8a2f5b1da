import { describe, expect, it } from 'vitest';
import {
  DEFAULT_ADAPTIVE_SETTINGS,
  initialLimitState,
  nextLimitState,
  usableLimit,
  type AdaptiveLimitState,
  sampleOutcome,
  type LimitSample,
} from '../../../src/delivery/adaptive-limit.js';

const MAX = 64;
const settings = { ...DEFAULT_ADAPTIVE_SETTINGS, max: MAX };

/**
 * Feeds samples one after the other (each started after the previous one finished); each sees the
 * destination fully used unless it says otherwise.
 */
function run(samples: Array<Partial<LimitSample>>, start: AdaptiveLimitState = initialLimitState(MAX)): AdaptiveLimitState {
  let clock = 0;
  return samples.reduce<AdaptiveLimitState>((state, sample) => {
    const startedAt = (clock += 1);
    const finishedAt = (clock += 1);
    return nextLimitState(state, { durationMs: 5, outcome: 'ok', inFlight: usableLimit(state, MAX), startedAt, finishedAt, ...sample }, settings);
  }, start);
}

const times = (n: number, sample: Partial<LimitSample>): Array<Partial<LimitSample>> => Array.from({ length: n }, () => sample);
const healthy = times(200, { durationMs: 5 });
const START = MAX / 2;

describe('adaptive limit', () => {
  it('starts at half its ceiling (at least 1)', () => {
    expect(usableLimit(initialLimitState(MAX), MAX)).toBe(MAX / 2);
    expect(usableLimit(initialLimitState(5), 5)).toBe(2);
    expect(usableLimit(initialLimitState(1), 1)).toBe(1);
  });

  it.each<[string, Array<Partial<LimitSample>>, (limit: number) => boolean]>([
    ['a healthy sink that uses its limit: rises by one per answer', times(10, { durationMs: 5 }), (l) => l === START + 10],
    ['a healthy sink for long: reaches the ceiling and stays there', healthy, (l) => l === MAX],
    ['a healthy sink sent little: stays (proves nothing about more)', times(50, { durationMs: 5, inFlight: 2 }), (l) => l === START],
    ['healthy, then failing (429/5xx/timeouts): falls', [...healthy, ...times(10, { outcome: 'overload' })], (l) => l < MAX * 0.4],
    ['healthy, then slow (20x its usual latency): falls', [...healthy, ...times(10, { durationMs: 500 })], (l) => l < MAX * 0.4],
    ['a steady 100 ms sink is not slow: rises', times(100, { durationMs: 100 }), (l) => l === MAX],
    ['jitter of a few ms on a fast sink is not slow', [...healthy, ...times(20, { durationMs: 30 })], (l) => l === MAX],
    ['failing for long: never below 1', [...healthy, ...times(500, { outcome: 'overload' })], (l) => l === 1],
    ['failing, then healthy again: recovers', [...times(500, { outcome: 'overload' }), ...times(200, { durationMs: 5 })], (l) => l === MAX],
  ])('%s', (_name, samples, expected) => {
    const limit = usableLimit(run(samples), MAX);
    expect(limit, `limit ${limit}`).toSatisfy(expected);
    expect(limit).toBeGreaterThanOrEqual(1);
    expect(limit).toBeLessThanOrEqual(MAX);
  });

  it('a destination that stays slower settles at its new pace and rises again', () => {
    const slowed = run([...healthy, ...times(60, { durationMs: 500 })]);
    const after = run(times(100, { durationMs: 500 }), slowed);
    expect(usableLimit(after, MAX)).toBeGreaterThan(usableLimit(slowed, MAX));
  });

  it('halves once per round trip: attempts in flight when it was halved do not halve it again', () => {
    const state = run(healthy);
    const sample = (startedAt: number, finishedAt: number): LimitSample => ({ durationMs: finishedAt - startedAt, outcome: 'overload', inFlight: MAX, startedAt, finishedAt });
    // Forty attempts started together at 1,000 and fail together around 1,030.
    const afterBatch = Array.from({ length: 40 }, (_, i) => sample(1_000, 1_030 + i)).reduce((s, one) => nextLimitState(s, one, settings), state);
    expect(usableLimit(afterBatch, MAX)).toBe(MAX / 2);
    // An attempt started after that decrease fails too: news, halved again.
    expect(usableLimit(nextLimitState(afterBatch, sample(1_100, 1_130), settings), MAX)).toBe(MAX / 4);
  });

  it('never exceeds a lower ceiling passed later', () => {
    const state = run(healthy);
    expect(nextLimitState(state, { durationMs: 5, outcome: 'ok', inFlight: 8, startedAt: 0, finishedAt: 5 }, { ...settings, max: 8 }).limit).toBe(8);
    expect(usableLimit(state, 8)).toBe(8);
  });
});

describe('sampleOutcome', () => {
  it.each<[number | undefined, string | undefined, 'ok' | 'overload' | null]>([
    [200, undefined, 'ok'],
    [404, undefined, 'ok'], // a verdict, answered promptly: not load
    [429, undefined, 'overload'],
    [408, undefined, 'overload'],
    [503, undefined, 'overload'],
    [500, undefined, 'overload'],
    [undefined, 'timeout', 'overload'],
    [undefined, 'ECONNREFUSED', 'overload'],
    [undefined, 'aborted', null],
    [undefined, 'destination_refused', null],
    [undefined, 'invalid_url', null],
  ])('status %s, error %s → %s', (status, code, expected) => expect(sampleOutcome(status, code)).toBe(expected));
});
