import { describe, expect, it } from 'vitest';
import { GroupCommit } from '../../../src/store/sqlite/group-commit.js';

describe('GroupCommit', () => {
  it('commits everything submitted in one turn of the event loop as one batch', async () => {
    const batches: number[][] = [];
    const group = new GroupCommit<number, number>((items) => {
      batches.push(items);
      return items.map((n) => n * 10);
    });
    const results = await Promise.all([1, 2, 3, 4].map((n) => group.submit(n)));
    expect(results).toEqual([10, 20, 30, 40]);
    expect(batches).toEqual([[1, 2, 3, 4]]);
  });

  it('splits a burst larger than the batch limit into several transactions', async () => {
    const sizes: number[] = [];
    const group = new GroupCommit<number, number>((items) => {
      sizes.push(items.length);
      return items;
    }, undefined, 3);
    await Promise.all([1, 2, 3, 4, 5, 6, 7].map((n) => group.submit(n)));
    expect(sizes).toEqual([3, 3, 1]);
  });

  it('retries a failed batch item by item so one bad item does not fail its neighbours', async () => {
    const group = new GroupCommit<number, number>((items) => {
      if (items.includes(2)) throw new Error('bad item 2');
      return items;
    });
    const results = await Promise.allSettled([1, 2, 3].map((n) => group.submit(n)));
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
  });

  it('rejects every item when the store itself fails', async () => {
    const group = new GroupCommit<number, number>(() => {
      throw new Error('disk full');
    });
    const results = await Promise.allSettled([1, 2].map((n) => group.submit(n)));
    expect(results.every((r) => r.status === 'rejected')).toBe(true);
  });

  it('answers nobody before the commit is durable, and reports a failed fsync as a failure', async () => {
    let finishDurable!: (err?: Error) => void;
    const group = new GroupCommit<number, number>(
      (items) => items,
      () => new Promise<void>((resolve, reject) => (finishDurable = (err) => (err ? reject(err) : resolve()))),
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
});
