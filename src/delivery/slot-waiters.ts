import type { ReleaseSlot } from './destination-limiter.js';
import type { AttemptAbort } from './http-sender.js';

interface Waiter {
  take: () => ReleaseSlot | null;
  settle: (slot: ReleaseSlot | null) => void;
}

/**
 * Claimed rows waiting in memory for a slot at their destination, first come first served: each takes the
 * slot an attempt there gives back, the moment it does. Rows given back to the outbox instead come back
 * at a guess, too soon (a claim and a give-back wasted) or too late (the destination idle). Bounded: at
 * most `maxWaiting` rows in all, and per destination what the caller says it is worth holding.
 */
export class SlotWaiters {
  private readonly queues = new Map<string, Waiter[]>();
  private waiting = 0;

  constructor(private readonly maxWaiting: number) {}

  get size(): number {
    return this.waiting;
  }

  /**
   * A slot at `destination` from `take()` once the rows ahead have theirs; null at once when there is no room
   * to wait (`perDestination` rows already wait there, or `maxWaiting` in all), and null when `abort` fires.
   */
  wait(destination: string, perDestination: number, take: () => ReleaseSlot | null, abort: AttemptAbort): Promise<ReleaseSlot | null> | null {
    let queue = this.queues.get(destination);
    if (abort.aborted || this.waiting >= this.maxWaiting || (queue?.length ?? 0) >= perDestination) return null;
    if (!queue) this.queues.set(destination, (queue = []));
    const line = queue;
    this.waiting += 1;
    return new Promise<ReleaseSlot | null>((resolve) => {
      const waiter: Waiter = {
        take,
        settle: (slot) => {
          this.waiting -= 1;
          abort.forget();
          resolve(slot);
        },
      };
      line.push(waiter);
      abort.onAbort(() => {
        const at = line.indexOf(waiter);
        if (at < 0) return;
        line.splice(at, 1);
        if (line.length === 0 && this.queues.get(destination) === line) this.queues.delete(destination);
        waiter.settle(null);
      });
    });
  }

  /** An attempt at `destination` gave its slot back: the rows first in line take the slots now free. */
  freed(destination: string): void {
    const queue = this.queues.get(destination);
    if (!queue) return;
    while (queue.length > 0) {
      const slot = queue[0]!.take();
      if (!slot) return;
      queue.shift()!.settle(slot);
    }
    this.queues.delete(destination);
  }
}
