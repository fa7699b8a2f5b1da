import { describe, expect, it } from 'vitest';
import { createDestinationLimiter, type ReleaseSlot } from '../../../src/delivery/destination-limiter.js';
import { LeasedAttempt } from '../../../src/delivery/lease-keeper.js';
import { SlotWaiters } from '../../../src/delivery/slot-waiters.js';

const D = 'https://hooks.example.com';
const leased = (id: number) => new LeasedAttempt({ id, leaseToken: 't', ruleId: 'r' }, Number.MAX_SAFE_INTEGER);

/** A destination with one slot, taken by a running attempt, and an empty line for it. */
function busyDestination() {
  const limiter = createDestinationLimiter({ adaptive: false });
  const limits = { concurrency: 1 };
  const running = limiter.tryAcquire(D, limits)!;
  return { running, waiters: new SlotWaiters(10), take: () => limiter.tryAcquire(D, limits) };
}

describe('SlotWaiters', () => {
  it('gives each slot a destination frees to the row first in line, at once', async () => {
    const { running, waiters, take } = busyDestination();
    const order: number[] = [];
    const first = waiters.wait(D, 2, take, leased(1))!.then((slot) => (order.push(1), slot));
    const second = waiters.wait(D, 2, take, leased(2))!.then((slot) => (order.push(2), slot));
    expect(waiters.size).toBe(2);
    // Freed while still taken (another attempt holds it): nobody moves.
    waiters.freed(D);
    running();
    waiters.freed(D);
    const slot = (await first)!;
    expect(slot).toBeTypeOf('function');
    expect(order).toEqual([1]);
    expect(waiters.size).toBe(1);
    slot();
    waiters.freed(D);
    expect(await second).toBeTypeOf('function');
    expect(order).toEqual([1, 2]);
    expect(waiters.size).toBe(0);
  });

  it('has no room beyond its bounds: per destination, and in all', () => {
    const waiters = new SlotWaiters(3);
    const never = (): ReleaseSlot | null => null;
    expect(waiters.wait(D, 2, never, leased(1))).not.toBeNull();
    expect(waiters.wait(D, 2, never, leased(2))).not.toBeNull();
    expect(waiters.wait(D, 2, never, leased(3))).toBeNull();
    expect(waiters.wait('https://other.example', 5, never, leased(4))).not.toBeNull();
    expect(waiters.wait('https://third.example', 5, never, leased(5))).toBeNull();
    expect(waiters.size).toBe(3);
  });

  it('lets an aborted row out of the line with no slot, and gives the next slot to the row behind it', async () => {
    const { running, waiters, take } = busyDestination();
    const lost = leased(1);
    const first = waiters.wait(D, 5, take, lost)!;
    const second = waiters.wait(D, 5, take, leased(2))!;
    lost.abort();
    expect(await first).toBeNull();
    expect(waiters.size).toBe(1);
    running();
    waiters.freed(D);
    expect(await second).toBeTypeOf('function');
    // An attempt aborted before it asks does not wait.
    const aborted = leased(3);
    aborted.abort();
    expect(waiters.wait(D, 5, take, aborted)).toBeNull();
  });
});
