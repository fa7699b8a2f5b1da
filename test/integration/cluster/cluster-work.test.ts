import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { JobRunner } from '../../../src/operations/jobs/job-runner.js';
import { RetentionPruner } from '../../../src/retention/retention-pruner.js';
import { PostgresStore } from '../../../src/store/postgres/postgres-store.js';
import { SqliteStore } from '../../../src/store/sqlite/sqlite-store.js';
import type { NewNode } from '../../../src/store/cluster-store.js';
import type { Store } from '../../../src/store/store.js';
import { createTestDatabase, describeWithPostgres, TEST_POOL, type TestDatabase } from '../../helpers/postgres.js';
import { makeTempDir, removeTempDirs } from '../../helpers/temp-dir.js';

/**
 * Bulk jobs and retention once across the cluster: two nodes on one store (PostgreSQL: two stores on one
 * database, as two processes have; SQLite: the one store its one process has).
 */
interface TwoNodes {
  a: Store;
  b: Store;
}

const logger = pino({ level: 'silent' });
// The seeded dead deliveries' rule is in the rule set: a bulk retry skips those of removed rules.
const SEEDED_RULES = { hash: 'none', rules: [{ id: 'seeded' }], loadedAt: new Date(), byEvent: new Map() } as never;
afterAll(() => removeTempDirs());

function nodeRow(id: string): NewNode {
  return { id, host: 'test', pid: 1, role: 'all', version: 'test', ruleSetHash: null, heartbeatMs: 60_000, startedAt: Date.now() };
}

let seeded = 0;

/** Events with new transfer ids each time: a removed event's key stays in the ledger of seen keys. */
async function seedDead(store: Store, count: number): Promise<void> {
  const first = seeded;
  seeded += count;
  await Promise.all(
    Array.from({ length: count }, (_, n) => first + n).map((i) =>
      store.saveEvent({
        source: 'checkout', event: 'transfer:succeeded', transferId: `dead-${i}`, checkoutId: null, email: null, walletAddress: null, validation: 'valid',
        receivedAt: Date.now() - 40 * 86_400_000, headers: {}, body: Buffer.from(`{"result":{"id":"dead-${i}"}}`),
        deliveries: [{ ruleId: 'seeded', ruleSetHash: 'h', body: null, contentType: 'application/json', deadReason: 'seeded' }],
      }),
    ),
  );
}

/** The store with its job-progress writes held until `release()`: the job's first batch is written, and it waits there. */
function holdingProgress(store: Store): { store: Store; release: () => void; reached: Promise<void> } {
  let release!: () => void;
  let reachedResolve!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const reached = new Promise<void>((resolve) => (reachedResolve = resolve));
  const held = new Proxy(store, {
    get(target, key, receiver) {
      if (key === 'updateJobProgress') {
        return async (...args: Parameters<Store['updateJobProgress']>) => {
          await target.updateJobProgress(...args);
          reachedResolve();
          await gate;
        };
      }
      const value = Reflect.get(target, key, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return { store: held, release, reached };
}

const runner = (store: Store, nodeId: string) => JobRunner.start({ store, rules: () => SEEDED_RULES, env: {}, logger, now: Date.now, nodeId });

function clusterWork(openNodes: () => Promise<TwoNodes>): void {
  let opened: Store[] = [];
  afterEach(async () => {
    for (const store of opened.splice(0)) await store.close();
  });
  const open = async (): Promise<TwoNodes> => {
    const nodes = await openNodes();
    opened = [...new Set([nodes.a, nodes.b])];
    return nodes;
  };

  it('a job running on one node stops at its next batch when cancelled through another', async () => {
    const { a, b } = await open();
    await a.registerNode(nodeRow('node_a'));
    await b.registerNode(nodeRow('node_b'));
    await seedDead(a, 450);
    const held = holdingProgress(a);
    const onA = await runner(held.store, 'node_a');
    const job = await onA.startRetry({ all: true }, {});
    expect(job.nodeId).toBe('node_a');
    await held.reached; // the first batch of 200 is written; node a waits before its next batch
    // Node b starting does not fail a job that live node a runs.
    const onB = await runner(b, 'node_b');
    expect((await b.getJob(job.id))!.state).toBe('running');
    expect((await onB.cancel(job.id)).state).toBe('cancelled');
    held.release();
    await onA.settled(job.id);
    const final = (await a.getJob(job.id))!;
    expect(final).toMatchObject({ state: 'cancelled', processed: 200 });
    expect(await a.countDeadDeliveries({})).toBe(250); // no batch after the cancel
    await onA.stop();
    await onB.stop();
  });

  it('a starting node fails the jobs of nodes that are gone, never those of live nodes', async () => {
    const { a, b } = await open();
    await a.registerNode(nodeRow('node_live'));
    await a.registerNode(nodeRow('node_crashed'));
    const live = await a.createJob({ kind: 'retry', filter: {}, ruleId: null, total: 1, startedAt: Date.now(), nodeId: 'node_live' });
    const orphan = await a.createJob({ kind: 'retry', filter: {}, ruleId: null, total: 1, startedAt: Date.now(), nodeId: 'node_crashed' });
    await b.deregisterNode('node_crashed');
    const onB = await runner(b, 'node_b');
    expect((await b.getJob(live.id))!.state).toBe('running');
    expect(await b.getJob(orphan.id)).toMatchObject({ state: 'failed', error: expect.stringContaining('stopped node') });
    await onB.stop();
  });

  it('retention runs on one node at a time: of two passes started together one prunes, the other is skipped', async () => {
    const { a, b } = await open();
    await seedDead(a, 30);
    const settings = { maxAgeDays: 30, maxEvents: 1_000_000, intervalMs: 3_600_000, batchSize: 10 };
    const onA = new RetentionPruner({ store: a, settings, logger, leaseHolder: 'node_a' });
    const onB = new RetentionPruner({ store: b, settings, logger, leaseHolder: 'node_b' });
    const reports = await Promise.all([onA.runOnce(), onB.runOnce()]);
    expect(reports.map((r) => r.skipped).sort()).toEqual([false, true]);
    expect(reports.reduce((sum, r) => sum + r.byAge, 0)).toBe(30);
    expect(await a.countEvents({})).toBe(0);
    // The lease is given back after a pass: the other node takes the next one.
    await seedDead(a, 5);
    const skipped = reports.findIndex((r) => r.skipped);
    const next = await [onA, onB][skipped]!.runOnce();
    expect(next).toMatchObject({ skipped: false, byAge: 5 });
    // While a node holds the lease, another node's pass does nothing.
    expect(await a.acquireLease('retention', 'node_a', 60_000)).toBe(true);
    await seedDead(a, 5);
    expect(await onB.runOnce()).toMatchObject({ skipped: true, byAge: 0 });
    expect(await b.countEvents({})).toBe(5);
  });
}

describe('cluster-wide jobs and retention (SQLite)', () => {
  clusterWork(async () => {
    const store = new SqliteStore({ dataDir: makeTempDir(), durability: 'normal' });
    return { a: store, b: store };
  });
});

let database: TestDatabase;
describeWithPostgres('cluster-wide jobs and retention (PostgreSQL)', () => {
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(() => database.drop());
  clusterWork(async () => {
    const url = await database.freshSchemaUrl();
    const a = await PostgresStore.open({ url, ...TEST_POOL });
    const b = await PostgresStore.open({ url, ...TEST_POOL });
    return { a, b };
  });
});
