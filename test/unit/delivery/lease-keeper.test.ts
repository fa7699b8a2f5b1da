import { describe, expect, it } from 'vitest';
import { LeaseKeeper, LeasedAttempt, type LeaseKeeperOptions } from '../../../src/delivery/lease-keeper.js';
import { eventually } from '../../helpers/rules.js';

const delivery = (id: number) => ({ id, leaseToken: `token-${id}`, ruleId: 'r' });

function keeper(leaseMs: number, renew: LeaseKeeperOptions['renew']) {
  const lost: { id: number; reason: string; at: number }[] = [];
  const leases = new LeaseKeeper({ leaseMs, now: Date.now, renew, onLost: (attempt, reason) => lost.push({ id: attempt.delivery.id, reason, at: Date.now() }) });
  return { leases, lost };
}

describe('LeaseKeeper', () => {
  it('renews when half the lease is left, and again after each renewal', async () => {
    const start = Date.now();
    const renewals: number[] = [];
    const { leases, lost } = keeper(200, async () => (renewals.push(Date.now()), true));
    const attempt = new LeasedAttempt(delivery(1), start + 200);
    leases.hold(attempt);
    try {
      await eventually(() => renewals.length >= 3, 5_000, 'three renewals');
      expect(renewals[0]! - start).toBeGreaterThanOrEqual(95);
      expect(attempt.leaseEnd).toBeGreaterThan(start + 200);
      expect(lost).toEqual([]);
      expect(attempt.aborted).toBe(false);
    } finally {
      attempt.end();
    }
  });

  it('aborts the attempt at once when the lease is no longer ours, telling its exchange once', async () => {
    const { leases, lost } = keeper(200, async () => false);
    const attempt = new LeasedAttempt(delivery(2), Date.now() + 200);
    const stopped: string[] = [];
    attempt.onAbort(() => stopped.push('exchange'));
    leases.hold(attempt);
    await eventually(() => lost.length > 0, 5_000, 'lost');
    expect(lost.map(({ id, reason }) => ({ id, reason }))).toEqual([{ id: 2, reason: 'lease lost to another claim' }]);
    expect(attempt.aborted).toBe(true);
    expect(stopped).toEqual(['exchange']);
    attempt.end();
  });

  it('aborts before the lease ends when the store does not answer, and only once', async () => {
    const start = Date.now();
    const { leases, lost } = keeper(400, () => new Promise<boolean>(() => {}));
    const attempt = new LeasedAttempt(delivery(3), start + 400);
    leases.hold(attempt);
    await eventually(() => lost.length > 0, 5_000, 'lost');
    expect(lost[0]!.at - start).toBeLessThan(400);
    expect(lost[0]!.reason).toBe('lease could not be renewed in time');
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(lost).toHaveLength(1);
    attempt.end();
  });

  it('keeps trying after a store error until the deadline, then aborts', async () => {
    const start = Date.now();
    let calls = 0;
    const { leases, lost } = keeper(400, async () => {
      calls += 1;
      throw new Error('store down');
    });
    const attempt = new LeasedAttempt(delivery(4), start + 400);
    leases.hold(attempt);
    await eventually(() => lost.length > 0, 5_000, 'lost');
    expect(calls).toBeGreaterThan(1);
    expect(lost[0]!.at - start).toBeLessThan(400);
    attempt.end();
  });

  it('leaves an attempt that ended alone, even when its renewal answers afterwards', async () => {
    let answer: (kept: boolean) => void = () => undefined;
    const renewing = new Promise<boolean>((resolve) => (answer = resolve));
    let calls = 0;
    const { leases, lost } = keeper(200, () => ((calls += 1), renewing));
    const attempt = new LeasedAttempt(delivery(5), Date.now() + 200);
    leases.hold(attempt);
    await eventually(() => calls === 1, 5_000, 'a renewal under way');
    attempt.end();
    answer(false);
    await new Promise((resolve) => setTimeout(resolve, 250));
    expect(lost).toEqual([]);
    expect(attempt.aborted).toBe(false);
    expect(calls).toBe(1);
  });

  it('aborts every attempt it holds at shutdown, and an attempt aborted before its exchange listens is seen as aborted', () => {
    const { leases } = keeper(60_000, async () => true);
    const attempts = [new LeasedAttempt(delivery(6), Date.now() + 60_000), new LeasedAttempt(delivery(7), Date.now() + 60_000)];
    const stopped: number[] = [];
    attempts[0]!.onAbort(() => stopped.push(6));
    for (const attempt of attempts) leases.hold(attempt);
    leases.abortAll();
    expect(attempts.map((a) => a.aborted)).toEqual([true, true]);
    expect(stopped).toEqual([6]);
    // A listener that came later, or was forgotten, is not called.
    attempts[1]!.onAbort(() => stopped.push(7));
    attempts[1]!.abort();
    expect(stopped).toEqual([6]);
    for (const attempt of attempts) attempt.end();
  });
});
