import { describe, expect, it } from 'vitest';
import { letPass, node, storeOpener, TestClock, waitUntilNotLive, type StoreFactory } from './contract-helpers.js';

export function clusterStoreContract(factory: StoreFactory): void {
  const open = storeOpener(factory);

  describe('ClusterStore: the node registry', () => {
    it('lists registered nodes oldest first with their heartbeat; a heartbeat updates the rule set; deregistered nodes leave', async () => {
      const store = await open();
      const before = Date.now();
      await store.registerNode(node('node_b', { startedAt: 2_000, role: 'worker' }));
      await store.registerNode(node('node_a', { startedAt: 1_000, ruleSetHash: null }));
      const listed = await store.listLiveNodes();
      expect(listed.map((n) => n.id)).toEqual(['node_a', 'node_b']);
      expect(listed[1]).toEqual({ ...node('node_b', { startedAt: 2_000, role: 'worker' }), lastHeartbeat: expect.any(Number) });
      // The store's clock (PostgreSQL: the database's) in the caller's: within the measured offset's error.
      for (const n of listed) expect(Math.abs(n.lastHeartbeat - before)).toBeLessThan(5_000);
      expect(await store.heartbeatNode('node_a', 'hash-2')).toBe(true);
      expect((await store.listLiveNodes())[0]).toMatchObject({ id: 'node_a', ruleSetHash: 'hash-2' });
      await store.deregisterNode('node_b');
      expect((await store.listLiveNodes()).map((n) => n.id)).toEqual(['node_a']);
      expect(await store.heartbeatNode('node_b', 'hash-2')).toBe(false); // gone: the node registers again
      await store.registerNode(node('node_a', { role: 'receiver' })); // the same id again replaces its row
      expect(await store.listLiveNodes()).toEqual([expect.objectContaining({ id: 'node_a', role: 'receiver' })]);
    });

    it('a node is no longer live after three of its heartbeat intervals without a heartbeat, and live again after one', async () => {
      const clock = new TestClock();
      const store = await open(clock);
      await store.registerNode(node('node_slow', { heartbeatMs: 60_000 }));
      await store.registerNode(node('node_fast', { heartbeatMs: 10 }));
      await waitUntilNotLive(factory, clock, store, 'node_fast');
      expect((await store.listLiveNodes()).map((n) => n.id)).toEqual(['node_slow']);
      expect(await store.heartbeatNode('node_fast', null)).toBe(true);
      expect((await store.listLiveNodes()).map((n) => n.id).sort()).toEqual(['node_fast', 'node_slow']);
    });

    it('keeps the nodes that are gone: one that left says when, one that went silent is missing since its last heartbeat', async () => {
      const clock = new TestClock();
      const store = await open(clock);
      await store.registerNode(node('node_live', { heartbeatMs: 60_000 }));
      await store.registerNode(node('node_left', { heartbeatMs: 60_000, host: 'web-2' }));
      await store.registerNode(node('node_dead', { heartbeatMs: 10, role: 'worker' }));
      const lastBeat = (await store.listLiveNodes()).find((n) => n.id === 'node_dead')!.lastHeartbeat;
      await waitUntilNotLive(factory, clock, store, 'node_dead');
      const beforeLeaving = Date.now();
      await store.deregisterNode('node_left');
      const gone = await store.listGoneNodes(10);
      expect(gone.map((n) => [n.id, n.left])).toEqual([['node_left', true], ['node_dead', false]]);
      expect(gone[0]).toMatchObject({ host: 'web-2', pid: 4242, role: 'all', version: '1.2.3', startedAt: 1_000 });
      expect(Math.abs(gone[0]!.since - beforeLeaving)).toBeLessThan(5_000);
      expect(gone[1]!.since).toBe(lastBeat);
      expect((await store.listLiveNodes()).map((n) => n.id)).toEqual(['node_live']);
      expect(await store.listGoneNodes(1)).toHaveLength(1);
      // A node that left stays left; registering the id again makes it live and no longer gone.
      expect(await store.heartbeatNode('node_left', null)).toBe(false);
      await store.registerNode(node('node_left'));
      expect((await store.listGoneNodes(10)).map((n) => n.id)).toEqual(['node_dead']);
    });

    it('orphans the running jobs of a node that left at once', async () => {
      const store = await open();
      await store.registerNode(node('node_job', { heartbeatMs: 60_000 }));
      const job = await store.createJob({ kind: 'retry', filter: {}, ruleId: null, nodeId: 'node_job', total: 1, startedAt: 1_000 });
      expect(await store.failOrphanedJobs('interrupted')).toBe(0);
      await store.deregisterNode('node_job');
      expect(await store.failOrphanedJobs('interrupted')).toBe(1);
      expect(await store.getJob(job.id)).toMatchObject({ state: 'failed', error: 'interrupted' });
    });
  });

  describe('ClusterStore: leases', () => {
    it('one holder at a time; the holder renews and releases; an expired lease goes to the next taker', async () => {
      const clock = new TestClock();
      const store = await open(clock);
      expect(await store.acquireLease('retention', 'node_a', 60_000)).toBe(true);
      expect(await store.acquireLease('retention', 'node_b', 60_000)).toBe(false);
      expect(await store.acquireLease('other-work', 'node_b', 60_000)).toBe(true); // leases are by name
      expect(await store.acquireLease('retention', 'node_a', 60_000)).toBe(true); // renewed
      await store.releaseLease('retention', 'node_b'); // not its lease: nothing happens
      expect(await store.acquireLease('retention', 'node_b', 60_000)).toBe(false);
      await store.releaseLease('retention', 'node_a');
      expect(await store.acquireLease('retention', 'node_b', 20)).toBe(true);
      const deadline = Date.now() + 5_000;
      while (!(await store.acquireLease('retention', 'node_a', 60_000))) {
        expect(Date.now()).toBeLessThan(deadline);
        await letPass(factory, clock, 10);
      }
      expect(await store.acquireLease('retention', 'node_b', 60_000)).toBe(false);
    });

    it('of many concurrent takers exactly one gets a free lease', async () => {
      const store = await open();
      const taken = await Promise.all(Array.from({ length: 8 }, (_, i) => store.acquireLease('retention', `node_${i}`, 60_000)));
      expect(taken.filter(Boolean)).toHaveLength(1);
    });
  });
}
