import { afterAll, describe, expect, it } from 'vitest';
import { countEventsThrough, startingAfterId } from '../../../src/operations/jobs/batches.js';
import { BulkReplayPlanner } from '../../../src/operations/bulk-replay-plan.js';
import { ReplayRouter } from '../../../src/operations/replay-routing.js';
import { runReplayJob } from '../../../src/operations/jobs/replay-job.js';
import type { RuleSet } from '../../../src/rules/types.js';
import { SqliteStore } from '../../../src/store/sqlite/sqlite-store.js';
import { makeTempDir, removeTempDirs } from '../../helpers/temp-dir.js';

afterAll(() => removeTempDirs());

/** Events received at these times, stored in this order (the 500 one arrives last, as an import of an old event would). */
async function storeWith(receivedAts: number[]): Promise<{ store: SqliteStore; ids: number[] }> {
  const store = new SqliteStore({ dataDir: makeTempDir(), durability: 'normal' });
  const ids: number[] = [];
  for (const [i, receivedAt] of receivedAts.entries()) {
    const body = Buffer.from(JSON.stringify({ event: 'transfer:succeeded', result: { id: `t-${i}` } }));
    ids.push((await store.saveEvent({ source: 'checkout', event: 'transfer:succeeded', transferId: `t-${i}`, checkoutId: null, email: null, walletAddress: null, validation: 'valid', receivedAt, headers: {}, body })).id);
  }
  return { store, ids };
}

describe('a walk over a time range starts at the first event received in it', () => {
  it('starts just before the lowest id received since then, at 0 without a start time, nowhere when nothing matches', async () => {
    const { store, ids } = await storeWith([1_000, 2_000, 3_000, 4_000, 500]);
    try {
      expect(await store.firstEventIdReceivedFrom(2_500)).toBe(ids[2]);
      expect(await startingAfterId(store, { receivedFrom: 2_500 })).toBe(ids[2]! - 1);
      expect(await startingAfterId(store, { receivedFrom: 400 })).toBe(ids[0]! - 1);
      expect(await startingAfterId(store, {})).toBe(0);
      expect(await startingAfterId(store, { receivedFrom: 9_000 })).toBeNull();
      const newest = ids.at(-1)!;
      expect(await countEventsThrough(store, { receivedFrom: 2_500 }, newest)).toBe(2);
      expect(await countEventsThrough(store, { receivedFrom: 450 }, newest)).toBe(5);
      expect(await countEventsThrough(store, { receivedFrom: 9_000 }, newest)).toBe(0);
      expect(await countEventsThrough(store, {}, newest)).toBe(5); // no time range: from the oldest event stored
      expect(await countEventsThrough(store, {}, ids[1]!)).toBe(2);
    } finally {
      await store.close();
    }
  });

  it('replays exactly the events received since then, and none of the older ones', async () => {
    const { store, ids } = await storeWith([1_000, 2_000, 3_000, 4_000, 500]);
    const seen: number[] = [];
    try {
      const originalList = store.listEventBodies.bind(store);
      store.listEventBodies = async (selection, limit) => {
        const events = await originalList(selection, limit);
        seen.push(...events.map((e) => e.id));
        return events;
      };
      const rules = { rules: [], hash: 'none', loadedAt: new Date(), files: [] } as unknown as RuleSet;
      const loop = { store, shouldStop: () => false, onProgress: async () => undefined };
      const planner = new BulkReplayPlanner(new ReplayRouter(store, {}, () => rules), 'current', null, false);
      const result = await runReplayJob(loop, { selection: { receivedFrom: 2_500 }, throughId: ids.at(-1)!, planner, total: 2 });
      expect(result.progress.processed).toBe(2);
      expect(seen).toEqual([ids[2], ids[3]]);
      expect(result.lastId).toBe(ids[3]);
    } finally {
      await store.close();
    }
  });
});
