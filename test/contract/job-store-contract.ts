import { describe, expect, it } from 'vitest';
import { node, perTestClock, storeOpener, TestClock, waitUntilNotLive, type StoreFactory } from './contract-helpers.js';

export function jobStoreContract(factory: StoreFactory): void {
  const clock = perTestClock();
  const open = storeOpener(factory, clock);

  describe('JobStore', () => {
    it('keeps a job\'s progress, lists newest first, and never overwrites a cancel with done', async () => {
      const store = await open();
      const job = await store.createJob({ kind: 'replay', filter: { event: 'transfer:succeeded' }, ruleId: null, total: 10, startedAt: 1_000, nodeId: null });
      expect(job).toMatchObject({ nodeId: null, state: 'running', processed: 0, created: 0, failed: 0, total: 10, filter: { event: 'transfer:succeeded' }, finishedAt: null });
      expect(job.summary).toBeNull();
      const summary = { route: 'original', perRule: { fwd: 3 }, unknownRouting: 1 };
      await store.updateJobProgress(job.id, { total: 10, processed: 3, created: 2, failed: 1, summary });
      // A report without a summary keeps the last one given.
      await store.updateJobProgress(job.id, { total: 10, processed: 4, created: 3, failed: 1 });
      expect(await store.getJob(job.id)).toMatchObject({ processed: 4, created: 3, failed: 1, summary });
      clock.set(2_000);
      expect(await store.finishJob(job.id, 'cancelled', null)).toBe(true);
      clock.set(3_000);
      expect(await store.finishJob(job.id, 'done', null)).toBe(false);
      expect(await store.getJob(job.id)).toMatchObject({ state: 'cancelled', finishedAt: 2_000 });
      const second = await store.createJob({ kind: 'retry', filter: {}, ruleId: 'r', total: 1, startedAt: 4_000, nodeId: null });
      expect((await store.listJobs(10)).map((j) => j.id)).toEqual([second.id, job.id]);
      clock.set(5_000);
      expect(await store.failOrphanedJobs('restarted')).toBe(1); // no node runs a job without one
      expect(await store.getJob(second.id)).toMatchObject({ state: 'failed', error: 'restarted', finishedAt: 5_000 });
      expect(await store.getJob(second.id + 100)).toBeNull();
    });

    it('fails only the running jobs whose node is not live: gone, deregistered, or silent too long', async () => {
      const clock = new TestClock();
      const store = await open(clock);
      await store.registerNode(node('node_live'));
      await store.registerNode(node('node_left'));
      await store.registerNode(node('node_silent', { heartbeatMs: 10 }));
      const jobOf = (nodeId: string | null) => store.createJob({ kind: 'retry', filter: {}, ruleId: null, total: 1, startedAt: 1_000, nodeId });
      const [live, left, silent, unknown] = await Promise.all([jobOf('node_live'), jobOf('node_left'), jobOf('node_silent'), jobOf('node_never_registered')]);
      await store.deregisterNode('node_left');
      await waitUntilNotLive(factory, clock, store, 'node_silent');
      expect(await store.failOrphanedJobs('node stopped')).toBe(3);
      expect(await store.getJob(live.id)).toMatchObject({ state: 'running', nodeId: 'node_live' });
      for (const job of [left, silent, unknown]) expect(await store.getJob(job.id)).toMatchObject({ state: 'failed', error: 'node stopped' });
      expect(await store.failOrphanedJobs('again')).toBe(0);
    });
  });
}
