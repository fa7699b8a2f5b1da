import { describe, expect, it } from 'vitest';
import { SqliteGroupCommit } from '../../../src/store/sqlite/group-commit.js';

describe('SqliteGroupCommit', () => {
  it('commits everything submitted in one turn of the event loop as one batch', async () => {
    const batches: number[][] = [];
    const group = new SqliteGroupCommit<number, number>((items) => {
      batches.push(items);
      return items.map((n) => n * 10);
    });
    const results = await Promise.all([1, 2, 3, 4].map((n) => group.submit(n)));
    expect(results).toEqual([10, 20, 30, 40]);
    expect(batches).toEqual([[1, 2, 3, 4]]);
  });

  it('splits a burst larger than the batch limit into several transactions', async () => {
    const sizes: number[] = [];
    const group = new SqliteGroupCommit<number, number>((items) => {
      sizes.push(items.length);
      return items;
    }, { maxBatch: 3 });
    await Promise.all([1, 2, 3, 4, 5, 6, 7].map((n) => group.submit(n)));
    expect(sizes).toEqual([3, 3, 1]);
  });

  it('retries a failed batch item by item so one bad item does not fail its neighbours', async () => {
    const group = new SqliteGroupCommit<number, number>((items) => {
      if (items.includes(2)) throw new Error('bad item 2');
      return items;
    });
    const results = await Promise.allSettled([1, 2, 3].map((n) => group.submit(n)));
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
  });

  it('rejects every item when the store itself fails', async () => {
    const group = new SqliteGroupCommit<number, number>(() => {
      throw new Error('disk full');
    });
    const results = await Promise.allSettled([1, 2].map((n) => group.submit(n)));
    expect(results.every((r) => r.status === 'rejected')).toBe(true);
  });

  it('answers nobody before the commit is durable, and reports a failed fsync as a failure', async () => {
    let finishDurable!: (err?: Error) => void;
    const group = new SqliteGroupCommit<number, number>(
      (items) => items,
      { makeDurable: () => new Promise<void>((resolve, reject) => (finishDurable = (err) => (err ? reject(err) : resolve()))) },
    );
    let answered = false;
    const pending = group.submit(1).then(() => (answered = true));
    await new Promise((r) => setTimeout(r, 20));
    expect(answered).toBe(false);
    finishDurable();
    await pending;
    expect(answered).toBe(true);

    const failing = group.submit(2);
    await new Promise((r) => setTimeout(r, 20));
    finishDurable(new Error('EIO'));
    await expect(failing).rejects.toThrow('EIO');
  });

  it('holds items submitted while a commit waits for durability, and commits them together as soon as it is durable', async () => {
    const batches: number[][] = [];
    const durableWaits: (() => void)[] = [];
    const group = new SqliteGroupCommit<number, number>(
      (items) => {
        batches.push([...items]);
        return items;
      },
      { makeDurable: () => new Promise<void>((resolve) => durableWaits.push(resolve)) },
    );
    const first = group.submit(1);
    const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
    await nextTurn();
    expect(batches).toEqual([[1]]);
    // Three more items over three turns of the event loop: no transaction while the first is not durable.
    const later: Promise<number>[] = [];
    for (const n of [2, 3, 4]) {
      later.push(group.submit(n));
      await nextTurn();
    }
    expect(batches).toEqual([[1]]);
    durableWaits[0]!();
    expect(await first).toBe(1);
    // Committed as the fsync ended, before the first item's answer ran: the next fsync need not wait a turn.
    expect(batches).toEqual([[1], [2, 3, 4]]);
    expect(durableWaits).toHaveLength(2);
    durableWaits[1]!();
    expect(await Promise.all(later)).toEqual([2, 3, 4]);
  });

  describe('commit pacing (minCommitIntervalMs)', () => {
    const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

    it('commits an item after a quiet spell at once, and holds items arriving sooner for one shared commit', async () => {
      const commits: { items: number[]; at: number }[] = [];
      const group = new SqliteGroupCommit<number, number>(
        (items) => {
          commits.push({ items: [...items], at: performance.now() });
          return items;
        },
        { makeDurable: async () => undefined, minCommitIntervalMs: 60 },
      );
      const started = performance.now();
      expect(await group.submit(1)).toBe(1);
      expect(commits.map((c) => c.items)).toEqual([[1]]);
      expect(commits[0]!.at - started).toBeLessThan(50); // no pacing wait for the first item
      const held = [group.submit(2), sleep(5).then(() => group.submit(3))];
      await sleep(20);
      expect(commits).toHaveLength(1); // 2 and 3 wait for the interval to end
      expect(await Promise.all(held)).toEqual([2, 3]);
      expect(commits.map((c) => c.items)).toEqual([[1], [2, 3]]);
      // Held for about the interval, not committed on the next turn. Node's timers count from the event
      // loop's cached clock, which can lag performance.now() by a few ms, so a timer may fire that much early.
      expect(commits[1]!.at - commits[0]!.at).toBeGreaterThanOrEqual(50);
      await sleep(80); // quiet for longer than the interval: the next item commits on the next turn
      const quietSubmit = performance.now();
      await group.submit(4);
      expect(commits.map((c) => c.items)).toEqual([[1], [2, 3], [4]]);
      expect(commits[2]!.at - quietSubmit).toBeLessThan(50);
    });

    it('paces only groups that wait for durability: others commit every turn', async () => {
      const batches: number[][] = [];
      const group = new SqliteGroupCommit<number, number>((items) => {
        batches.push([...items]);
        return items;
      }, { minCommitIntervalMs: 10_000 });
      await group.submit(1);
      await group.submit(2);
      expect(batches).toEqual([[1], [2]]);
    });
  });

  describe('a write lock held elsewhere for a moment', () => {
    const busy = (): Error => Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' });
    const retry = { isBusy: (err: unknown) => (err as { code?: string }).code === 'SQLITE_BUSY', forMs: 1_000, pauseMs: 5 };

    it('is waited out without blocking: the same batch commits once the lock is gone, later items join it', async () => {
      let lockedUntil = performance.now() + 400;
      const tries: number[][] = [];
      const group = new SqliteGroupCommit<number, number>((items) => {
        tries.push([...items]);
        if (performance.now() < lockedUntil) throw busy();
        return items.map((n) => n * 10);
      }, { failsEveryItem: () => true, busyRetry: retry });
      const first = Promise.all([1, 2].map((n) => group.submit(n)));
      // While the batch waits, the event loop keeps running: timers fire on time and new items queue up.
      const lag = await new Promise<number>((resolve) => {
        const t = performance.now();
        setTimeout(() => resolve(performance.now() - t - 10), 10);
      });
      const later = group.submit(3);
      expect(await first).toEqual([10, 20]);
      expect(await later).toBe(30);
      expect(lag).toBeLessThan(200);
      expect(tries.length).toBeGreaterThan(2);
      expect(tries[0]).toEqual([1, 2]);
      expect(tries.at(-1)).toEqual([1, 2, 3]);
      lockedUntil = 0;
    });

    it('fails every item of the batch once the lock has been held longer than the retry window', async () => {
      let tries = 0;
      const group = new SqliteGroupCommit<number, number>(() => {
        tries += 1;
        throw busy();
      }, { failsEveryItem: () => true, busyRetry: { ...retry, forMs: 80 } });
      const started = performance.now();
      const results = await Promise.allSettled([1, 2].map((n) => group.submit(n)));
      expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
      expect((results[0] as PromiseRejectedResult).reason.code).toBe('SQLITE_BUSY');
      expect(performance.now() - started).toBeGreaterThanOrEqual(80);
      expect(tries).toBeGreaterThan(2);
    });

    it('is not retried when it is not a lock (a full disk fails at once)', async () => {
      let tries = 0;
      const group = new SqliteGroupCommit<number, number>(() => {
        tries += 1;
        throw Object.assign(new Error('disk full'), { code: 'SQLITE_FULL' });
      }, { failsEveryItem: () => true, busyRetry: retry });
      await expect(group.submit(1)).rejects.toThrow('disk full');
      expect(tries).toBe(1);
    });
  });

  describe('commitAlong', () => {
    it("commits the queued items in the caller's transaction and answers them from it, with no commit of their own", async () => {
      const ownCommits: number[][] = [];
      const group = new SqliteGroupCommit<number, number>((items) => {
        ownCommits.push(items);
        return items;
      });
      const answers = [1, 2].map((n) => group.submit(n));
      const value = group.commitAlong((items) => ({ results: items.map((n) => n * 100), value: `claimed with ${items.join('+')}` }));
      expect(value).toBe('claimed with 1+2');
      expect(await Promise.all(answers)).toEqual([100, 200]);
      await new Promise((resolve) => setImmediate(resolve));
      expect(ownCommits).toEqual([]);
      expect(group.pending).toBe(0);
    });

    it('gives the items back when the transaction fails, and they are committed on their own', async () => {
      const ownCommits: number[][] = [];
      const group = new SqliteGroupCommit<number, number>((items) => {
        ownCommits.push(items);
        return items.map((n) => -n);
      });
      const answers = [1, 2].map((n) => group.submit(n));
      expect(() => group.commitAlong(() => {
        throw new Error('SQLITE_BUSY');
      })).toThrow('SQLITE_BUSY');
      expect(await Promise.all(answers)).toEqual([-1, -2]);
      expect(ownCommits).toEqual([[1, 2]]);
    });

    it('is refused for a group whose commits must be made durable first', () => {
      const group = new SqliteGroupCommit<number, number>((items) => items, { makeDurable: async () => undefined });
      expect(() => group.commitAlong(() => ({ results: [], value: 0 }))).toThrow(/durability/);
    });
  });
});
