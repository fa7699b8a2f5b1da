import { describe, expect, it } from 'vitest';
import { PostgresGroupCommit } from '../../../../src/store/postgres/group-commit.js';

const tick = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 5));

describe('PostgresGroupCommit: group commit on an asynchronous database', () => {
  it('commits what arrives while a batch commits as the next batch, and answers each after its own commit', async () => {
    const batches: number[][] = [];
    const commits: (() => void)[] = [];
    const group = new PostgresGroupCommit<number, number>((items) => {
      batches.push(items);
      return new Promise((resolve) => commits.push(() => resolve(items.map((n) => n * 10))));
    });
    const first = [1, 2].map((n) => group.submit(n));
    await tick();
    const second = [3, 4, 5].map((n) => group.submit(n));
    await tick();
    expect(batches).toEqual([[1, 2]]); // one transaction at a time
    let secondAnswered = false;
    void Promise.all(second).then(() => (secondAnswered = true));
    commits.shift()!();
    expect(await Promise.all(first)).toEqual([10, 20]);
    await tick();
    expect(batches).toEqual([[1, 2], [3, 4, 5]]);
    expect(secondAnswered).toBe(false);
    commits.shift()!();
    expect(await Promise.all(second)).toEqual([30, 40, 50]);
    expect(group.pending).toBe(0);
  });

  it('fails every item alike on a store-wide error, and one by one when a single item is bad', async () => {
    const down = new PostgresGroupCommit<number, number>(async () => {
      throw Object.assign(new Error('gone'), { code: '57P01' });
    }, { failsEveryItem: (err) => (err as { code?: string }).code === '57P01' });
    const outcomes = await Promise.allSettled([1, 2, 3].map((n) => down.submit(n)));
    expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'rejected', 'rejected']);

    const calls: number[][] = [];
    const picky = new PostgresGroupCommit<number, number>(async (items) => {
      calls.push(items);
      if (items.includes(2)) throw new Error('bad item 2');
      return items;
    });
    const mixed = await Promise.allSettled([1, 2, 3].map((n) => picky.submit(n)));
    expect(mixed.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(calls).toEqual([[1, 2, 3], [1], [2], [3]]);
  });

  it('runs a batch again after a deadlock, and settles idle() once everything is answered', async () => {
    let tries = 0;
    const group = new PostgresGroupCommit<number, number>(async (items) => {
      tries += 1;
      if (tries < 3) throw Object.assign(new Error('deadlock detected'), { code: '40P01' });
      return items;
    }, { isRetryable: (err) => (err as { code?: string }).code === '40P01' });
    const answer = group.submit(7);
    await group.idle();
    expect(await answer).toBe(7);
    expect(tries).toBe(3);
  });

  it('answers every submitter by its deadline, queued behind a commit that never ends included, and never commits what it gave up on', async () => {
    const batches: number[][] = [];
    const timeLefts: number[] = [];
    const group = new PostgresGroupCommit<number, number>((items, timeLeftMs) => {
      batches.push(items);
      timeLefts.push(timeLeftMs);
      return new Promise(() => {}); // a database that stopped answering
    }, { deadlineMs: 50, deadlineError: (waitedMs) => new Error(`no commit within ${waitedMs} ms`) });
    const first = group.submit(1);
    await tick();
    const queued = group.submit(2); // waits behind the hung batch
    const outcomes = await Promise.allSettled([first, queued]);
    expect(outcomes.map((o) => (o.status === 'rejected' ? (o.reason as Error).message : o.value))).toEqual(['no commit within 50 ms', 'no commit within 50 ms']);
    expect(batches).toEqual([[1]]); // the queued item was dropped, not committed later
    expect(timeLefts[0]).toBeGreaterThan(0);
    expect(timeLefts[0]).toBeLessThanOrEqual(50);
  });

  it('gives up on the item-by-item retry of a failed batch at the deadline', async () => {
    const calls: number[][] = [];
    const group = new PostgresGroupCommit<number, number>(async (items) => {
      calls.push(items);
      if (items.length > 1) throw new Error('one bad item');
      if (items[0] === 1) return new Promise<number[]>(() => {}); // the first retry hangs
      return items;
    }, { deadlineMs: 50 });
    const outcomes = await Promise.allSettled([1, 2].map((n) => group.submit(n)));
    expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'rejected']);
    expect(calls).toEqual([[1, 2], [1]]);
  });

  describe('gathering (gatherMs)', () => {
    /** Commits at once and records when each batch started and what it held. */
    function recorded(options: { gatherMs: number; gatherAfter: number }) {
      const batches: { at: number; items: number[] }[] = [];
      const group = new PostgresGroupCommit<number, number>(async (items) => {
        batches.push({ at: performance.now(), items });
        return items;
      }, options);
      return { group, batches };
    }

    it('holds a batch for gatherMs from its first item after a batch of gatherAfter items, so later items share it', async () => {
      const { group, batches } = recorded({ gatherMs: 60, gatherAfter: 0 });
      const started = performance.now();
      const first = group.submit(1);
      await new Promise((resolve) => setTimeout(resolve, 25));
      const second = group.submit(2);
      expect(await Promise.all([first, second])).toEqual([1, 2]);
      expect(batches.map((b) => b.items)).toEqual([[1, 2]]);
      // Timers may fire a little early against performance.now(); what matters is that the item was held.
      expect(batches[0]!.at - started).toBeGreaterThanOrEqual(50);
    });

    it('commits on the next turn after smaller batches', async () => {
      const { group, batches } = recorded({ gatherMs: 60, gatherAfter: 2 });
      const started = performance.now();
      await group.submit(1);
      await group.submit(2);
      expect(batches.map((b) => b.items)).toEqual([[1], [2]]);
      expect(batches[1]!.at - started).toBeLessThan(50);
    });
  });
});
