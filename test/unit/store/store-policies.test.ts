import { describe, expect, it } from 'vitest';
import { deliveryAfterAttempt } from '../../../src/store/attempt-to-record.js';
import { leavesDeliveriesPending } from '../../../src/store/deliveries-due.js';
import { afterFailedBatch } from '../../../src/store/group-commit.js';
import { spaceRedrives } from '../../../src/store/redrive-spacing.js';
import type { AttemptRecord, NewDelivery } from '../../../src/store/outbox-store.js';

const delivery = (overrides: Partial<NewDelivery> = {}): NewDelivery => ({ ruleId: 'r', ruleSetHash: 'h', body: null, contentType: 'application/json', ...overrides });

describe('leavesDeliveriesPending: when a commit wakes the workers', () => {
  it.each([
    ['no deliveries', undefined, false],
    ['an empty plan', [], false],
    ['one due now', [delivery()], true],
    ['one due later', [delivery({ delayMs: 30_000 })], true],
    ['only dead ones', [delivery({ deadReason: 'rule removed' }), delivery({ deadReason: 'x' })], false],
    ['a dead one and a pending one', [delivery({ deadReason: 'x' }), delivery({ delayMs: 5 })], true],
  ])('%s: %s', (_name, deliveries, wakes) => {
    expect(leavesDeliveriesPending(deliveries)).toBe(wakes);
  });
});

describe('spaceRedrives', () => {
  it('puts the oldest first at the close, each next one the gap of the rule before it later, and skips rules without a gap', () => {
    const spacing = new Map([['a', 100], ['c', 1_000]]);
    const candidates = [{ id: 7, ruleId: 'a' }, { id: 3, ruleId: 'c' }, { id: 5, ruleId: 'skip' }, { id: 9, ruleId: 'a' }];
    expect(spaceRedrives(candidates, spacing, 50_000)).toEqual([
      { id: 3, dueAt: 50_000 },
      { id: 7, dueAt: 51_000 },
      { id: 9, dueAt: 51_100 },
    ]);
  });

  it('redrives nothing when no rule opted in', () => {
    expect(spaceRedrives([{ id: 1, ruleId: 'a' }], new Map(), 0)).toEqual([]);
  });
});

describe('deliveryAfterAttempt', () => {
  const attempt = (overrides: Partial<AttemptRecord> = {}): AttemptRecord => ({
    attempt: 2, startedAt: 1_000, durationMs: 5, urlOrigin: 'https://a.example', status: 503, errorCode: null, errorMessage: null, responseExcerpt: null, outcome: 'pending', ...overrides,
  });
  const record = (a: AttemptRecord, resolution: Parameters<typeof deliveryAfterAttempt>[0]['resolution']) => deliveryAfterAttempt({ deliveryId: 1, leaseToken: 't', attempt: a, resolution });

  it('keeps a pending failure due again, and starts the key\'s blocked time', () => {
    expect(record(attempt(), { state: 'pending', nextAttemptAt: 9_000 })).toEqual({
      state: 'pending', attempts: 2, nextAttemptAt: 9_000, lastStatus: 503, lastError: null, deadReason: null, retryableDeadDestination: null, blockedSince: 1_000, passOffsetStep: 0,
    });
  });

  it('keeps a failure outside the retry schedule out of its count', () => {
    const lost = attempt({ status: null, errorCode: 'ECONNRESET', errorMessage: 'read ECONNRESET' });
    expect(record(lost, { state: 'pending', nextAttemptAt: 1_005, outsideSchedule: true })).toMatchObject({ passOffsetStep: 1, nextAttemptAt: 1_005, lastError: 'ECONNRESET: read ECONNRESET' });
    expect(record(lost, { state: 'pending', nextAttemptAt: 6_000 }).passOffsetStep).toBe(0);
  });

  it('names the destination only of a retryable death, and the error as code: message', () => {
    const refused = attempt({ status: null, errorCode: 'ECONNREFUSED', errorMessage: 'refused', outcome: 'dead' });
    expect(record(refused, { state: 'dead', reason: 'retries exhausted', retryable: true })).toMatchObject({
      state: 'dead', nextAttemptAt: null, lastError: 'ECONNREFUSED: refused', deadReason: 'retries exhausted', retryableDeadDestination: 'https://a.example', blockedSince: null,
    });
    expect(record(attempt({ status: 404, outcome: 'dead' }), { state: 'dead', reason: 'permanent', retryable: false }).retryableDeadDestination).toBeNull();
  });

  it('does not start a blocked time for an attempt cut short by a shutdown', () => {
    expect(record(attempt({ errorCode: 'aborted', errorMessage: 'stopping', status: null }), { state: 'pending', nextAttemptAt: 2_000 })).toMatchObject({ blockedSince: null, lastError: 'aborted: stopping' });
  });
});

describe('afterFailedBatch', () => {
  const storeWide = (err: unknown): boolean => err === 'disk full';
  it.each([
    ['a batch of one', 'bad row', 1, 'fail-all'],
    ['a store-wide error', 'disk full', 8, 'fail-all'],
    ['one bad item among several', 'bad row', 8, 'one-by-one'],
  ] as const)('%s: %s', (_name, err, size, next) => {
    expect(afterFailedBatch(err, size, storeWide)).toBe(next);
  });
});
