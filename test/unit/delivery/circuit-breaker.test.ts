import { describe, expect, it } from 'vitest';
import { createCircuitBreaker } from '../../../src/delivery/circuit-breaker.js';

const S = 1000;

type Step = ['fail' | 'ok', number] | ['open?', number, boolean];

describe('circuit breaker', () => {
  it.each<[string, Step[]]>([
    ['four failures keep it closed', [['fail', 0], ['fail', 1], ['fail', 2], ['fail', 3], ['open?', 4, false]]],
    ['five consecutive failures open it for 30 s', [['fail', 0], ['fail', 1], ['fail', 2], ['fail', 3], ['fail', 4], ['open?', 5, true], ['open?', 4 + 30 * S - 1, true], ['open?', 4 + 30 * S, false]]],
    ['a success in between resets the count', [['fail', 0], ['fail', 1], ['fail', 2], ['fail', 3], ['ok', 4], ['fail', 5], ['open?', 6, false]]],
    [
      'a failed probe re-opens at once, for twice as long',
      [['fail', 0], ['fail', 0], ['fail', 0], ['fail', 0], ['fail', 0], ['fail', 30 * S], ['open?', 30 * S + 60 * S - 1, true], ['open?', 90 * S, false], ['fail', 90 * S], ['open?', 90 * S + 120 * S - 1, true]],
    ],
    ['a successful probe closes it', [['fail', 0], ['fail', 0], ['fail', 0], ['fail', 0], ['fail', 0], ['ok', 30 * S], ['fail', 30 * S], ['open?', 30 * S, false]]],
    ['failures of attempts already in flight do not extend the pause', [['fail', 0], ['fail', 0], ['fail', 0], ['fail', 0], ['fail', 0], ['fail', 10 * S], ['fail', 20 * S], ['open?', 30 * S, false]]],
  ])('%s', (_name, steps) => {
    const breaker = createCircuitBreaker();
    for (const step of steps) {
      if (step[0] === 'fail') breaker.recordFailure('a', step[1]);
      else if (step[0] === 'ok') breaker.recordSuccess('a');
      else expect(breaker.isOpen('a', step[1])).toBe(step[2]);
    }
    expect(breaker.isOpen('other', 0)).toBe(false);
  });

  it('says when an outage starts: the failure that first opens it returns when the run of failures began, re-openings do not', () => {
    const breaker = createCircuitBreaker({ failureThreshold: 3, coolDownMs: 10 * S });
    expect([breaker.recordFailure('a', 1 * S), breaker.recordFailure('a', 2 * S), breaker.recordFailure('a', 3 * S)]).toEqual([null, null, 1 * S]);
    expect(breaker.recordFailure('a', 13 * S)).toBeNull(); // the failed probe re-opens it: the same outage
    breaker.recordSuccess('a');
    expect([breaker.recordFailure('a', 40 * S), breaker.recordFailure('a', 41 * S), breaker.recordFailure('a', 42 * S)]).toEqual([null, null, 40 * S]);
  });

  it('grows the pause up to the maximum and reports when it ends', () => {
    const breaker = createCircuitBreaker({ failureThreshold: 1, coolDownMs: 10 * S, maxCoolDownMs: 35 * S });
    let now = 0;
    const pauses: number[] = [];
    for (let i = 0; i < 5; i += 1) {
      breaker.recordFailure('a', now);
      const until = breaker.reopensAt('a', now)!;
      pauses.push(until - now);
      now = until;
    }
    expect(pauses).toEqual([10 * S, 20 * S, 35 * S, 35 * S, 35 * S]);
    expect(breaker.reopensAt('a', now)).toBeNull();
  });
});

describe('circuit breaker: the probe after a pause goes alone', () => {
  it('lets attempts pass while closed; after the pause one probe, the others held until its outcome', () => {
    const breaker = createCircuitBreaker({ failureThreshold: 2, coolDownMs: 10 * S });
    expect(breaker.beginAttempt('a', 0)).toBe('pass');
    breaker.recordFailure('a', 0);
    // Failing, not yet paused: still as usual.
    expect(breaker.beginAttempt('a', 1)).toBe('pass');
    breaker.recordFailure('a', 1);
    expect(breaker.beginAttempt('a', 2)).toBe('held');
    // The pause ends: one probe; while it is in flight the circuit holds the rest.
    expect(breaker.beginAttempt('a', 10 * S + 1)).toBe('probe');
    expect(breaker.isOpen('a', 10 * S + 2)).toBe(true);
    expect(breaker.reopensAt('a', 10 * S + 2)).toBeNull();
    expect(breaker.beginAttempt('a', 10 * S + 2)).toBe('held');
    // It fails: paused again, twice as long.
    breaker.recordFailure('a', 10 * S + 5);
    expect(breaker.reopensAt('a', 10 * S + 6)).toBe(30 * S + 5);
    expect(breaker.beginAttempt('a', 30 * S + 5)).toBe('probe');
    // It succeeds: closed, everything passes.
    breaker.recordSuccess('a');
    expect([breaker.beginAttempt('a', 30 * S + 6), breaker.beginAttempt('a', 30 * S + 6)]).toEqual(['pass', 'pass']);
  });

  it('a probe that said nothing (aborted, refused, sent again at once) lets the next attempt probe', () => {
    const breaker = createCircuitBreaker({ failureThreshold: 1, coolDownMs: 10 * S });
    breaker.recordFailure('a', 0);
    expect(breaker.beginAttempt('a', 10 * S)).toBe('probe');
    expect(breaker.beginAttempt('a', 10 * S)).toBe('held');
    breaker.probeEnded('a');
    expect(breaker.isOpen('a', 10 * S)).toBe(false);
    expect(breaker.beginAttempt('a', 10 * S)).toBe('probe');
  });

  it('a probe whose outcome never comes stops holding the others after ten minutes', () => {
    const breaker = createCircuitBreaker({ failureThreshold: 1, coolDownMs: 10 * S });
    breaker.recordFailure('a', 0);
    expect(breaker.beginAttempt('a', 10 * S)).toBe('probe');
    expect(breaker.isOpen('a', 10 * S + 10 * 60 * S - 1)).toBe(true);
    expect(breaker.beginAttempt('a', 10 * S + 10 * 60 * S)).toBe('probe');
  });
});
