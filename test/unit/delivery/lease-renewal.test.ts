import { describe, expect, it } from 'vitest';
import { startLeaseRenewal } from '../../../src/delivery/lease-renewal.js';
import { eventually } from '../../helpers/rules.js';

describe('startLeaseRenewal', () => {
  it('renews when half the lease is left, and again after each renewal', async () => {
    const start = Date.now();
    const renewals: number[] = [];
    const lost: string[] = [];
    const stop = startLeaseRenewal({ leaseMs: 200, leaseEnd: start + 200, now: Date.now, onLost: (reason) => lost.push(reason), renew: async () => (renewals.push(Date.now()), true) });
    try {
      await eventually(() => renewals.length >= 3, 5_000, 'three renewals');
      expect(renewals[0]! - start).toBeGreaterThanOrEqual(95);
      expect(lost).toEqual([]);
    } finally {
      stop();
    }
  });

  it('gives up at once when the lease is no longer ours', async () => {
    const lost: string[] = [];
    startLeaseRenewal({ leaseMs: 200, leaseEnd: Date.now() + 200, now: Date.now, onLost: (reason) => lost.push(reason), renew: async () => false });
    await eventually(() => lost.length > 0, 5_000, 'lost');
    expect(lost).toEqual(['lease lost to another claim']);
  });

  it('gives up before the lease ends when the store does not answer, and only once', async () => {
    const start = Date.now();
    const lost: number[] = [];
    startLeaseRenewal({ leaseMs: 400, leaseEnd: start + 400, now: Date.now, onLost: () => lost.push(Date.now()), renew: () => new Promise<boolean>(() => {}) });
    await eventually(() => lost.length > 0, 5_000, 'lost');
    expect(lost[0]! - start).toBeLessThan(400);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(lost).toHaveLength(1);
  });

  it('keeps trying after a store error until the deadline, then gives up', async () => {
    const start = Date.now();
    let calls = 0;
    const lost: number[] = [];
    startLeaseRenewal({ leaseMs: 400, leaseEnd: start + 400, now: Date.now, onLost: () => lost.push(Date.now()), renew: async () => { calls += 1; throw new Error('store down'); } });
    await eventually(() => lost.length > 0, 5_000, 'lost');
    expect(calls).toBeGreaterThan(1);
    expect(lost[0]! - start).toBeLessThan(400);
  });
});
