import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { copyStore, type CopyOptions } from '../../src/store/copy-store.js';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { MAX_RECEIVED_COUNT, type NewEvent } from '../../src/store/event-store.js';
import type { Store } from '../../src/store/store.js';
import { createTestDatabase, describeWithPostgres, TEST_POOL, type TestDatabase } from '../helpers/postgres.js';
import { makeTempDir, removeTempDirs } from '../helpers/temp-dir.js';

// copyStore through the Store interface, between two SQLite stores (fast); between SQLite and PostgreSQL
// through the CLI in test/e2e/store-copy.test.ts.

const opened: Store[] = [];
afterEach(async () => {
  for (const store of opened.splice(0)) await store.close();
});
afterAll(() => removeTempDirs());

function open(): Store {
  const store = new SqliteStore({ dataDir: makeTempDir(), durability: 'normal' });
  opened.push(store);
  return store;
}

function event(transferId: string, receivedAt = 1_000): NewEvent {
  return {
    source: 'checkout', event: 'transfer:succeeded', transferId, checkoutId: null, email: null, walletAddress: null, validation: 'valid',
    receivedAt, headers: {}, body: Buffer.from(`{"id":"${transferId}"}`), deliveries: [{ ruleId: 'fwd', ruleSetHash: 'h', body: null, contentType: 'application/json' }],
  };
}

const options = (overrides: Partial<CopyOptions> = {}): CopyOptions => ({ batchSize: 2, shouldStop: () => false, onProgress: () => {}, now: () => 50_000, ...overrides });

describe('copyStore', () => {
  it('writes a held delivery lease-free and due at once, and a running job as failed', async () => {
    const source = open();
    await source.saveEvent(event('t-1'));
    const [held] = await source.claimDueDeliveries({ limit: 1, leaseMs: 600_000 });
    const job = await source.createJob({ kind: 'retry', filter: {}, ruleId: null, nodeId: null, total: 5, startedAt: 3_000 });
    const target = open();
    const result = await copyStore(source, target, options());
    expect(result).toMatchObject({ complete: true, sourceChanged: false, highestIds: { events: 1, deliveries: held!.id } });
    const [delivery] = await target.readCopyRows('deliveries', null, 10);
    expect(delivery).toMatchObject({ id: held!.id, state: 'pending', leaseToken: null, nextAttemptAt: 50_000 });
    expect(await target.getJob(job.id)).toMatchObject({ state: 'failed', finishedAt: 50_000, error: expect.stringContaining('copied while the job ran') });
    expect((await target.claimDueDeliveries({ limit: 10, leaseMs: 1_000 })).map((d) => d.id)).toEqual([held!.id]);
  });

  it('stops between batches when asked and carries on from the target on the next run, reporting progress over all rows', async () => {
    const source = open();
    for (let i = 0; i < 5; i += 1) await source.saveEvent(event(`t-${i}`, 1_000 + i));
    const target = open();
    let batches = 0;
    const first = await copyStore(source, target, options({ shouldStop: () => batches >= 2, onProgress: () => (batches += 1) }));
    expect(first.complete).toBe(false);
    expect((await target.copyExtent()).events.rows).toBe(4);
    const progress: number[] = [];
    const second = await copyStore(source, target, options({ onProgress: (p) => progress.push(p.done) }));
    expect(second.complete).toBe(true);
    expect(second.tables.events).toEqual({ source: 5, added: 1, written: 3 }); // the target's lowest and highest rows are checked again
    // 4 events counted as done from the start, then the rest of 10 rows (no seen keys: every event is kept).
    expect(progress).toEqual([5, 7, 9, 10]);
    expect(await target.copyExtent()).toEqual(await source.copyExtent());
  });

  it("refuses to carry on when the target's highest row is not the source's", async () => {
    const source = open();
    await source.saveEvent(event('mine'));
    const target = open();
    await target.saveEvent(event('mine'));
    await target.saveEvent(event('theirs'));
    await expect(copyStore(source, target, options())).rejects.toMatchObject({ code: 'store_copy_conflict', details: { table: 'events', id: 2 } });
    const sameIdOtherTransfer = open();
    await sameIdOtherTransfer.saveEvent(event('theirs'));
    await expect(copyStore(source, sameIdOtherTransfer, options())).rejects.toMatchObject({ code: 'store_copy_conflict', details: { table: 'events', id: 1 } });
    expect((await sameIdOtherTransfer.copyExtent()).deliveries.rows).toBe(1); // nothing written
  });

  it('says when the source changed while it was copied', async () => {
    const source = open();
    await source.saveEvent(event('t-1'));
    let added = false;
    const result = await copyStore(source, open(), options({
      pauseMs: 20, // lets the event saved meanwhile commit
      onProgress: () => {
        if (added) return;
        added = true;
        void source.saveEvent(event('late'));
      },
    }));
    expect(result.sourceChanged).toBe(true);
  });
});

describeWithPostgres('copyStore between SQLite and PostgreSQL', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(() => database.drop());

  it('keeps keys that a lossy text encoding would merge (lone surrogates, NUL, the escape character) distinct both ways, and counts within an integer', async () => {
    const keys = ['T-\ud800', 'T-\ufffd', 'T-\udc00x', 'T-\u0000', '\u0001"T-\\ud800"'];
    const source = open();
    for (const key of keys) await source.saveEvent({ ...event(key), event: `x:${key}` });
    // A count beyond PostgreSQL's integer, as an import before counts were bounded could leave it.
    (source as SqliteStore).db.prepare('UPDATE events SET received_count = ? WHERE id = 1').run(2 ** 40);
    const postgres = await PostgresStore.open({ url: await database.freshSchemaUrl(), ...TEST_POOL, notifications: false });
    opened.push(postgres);
    expect(await copyStore(source, postgres, options())).toMatchObject({ complete: true });
    const back = open();
    expect(await copyStore(postgres, back, options())).toMatchObject({ complete: true });
    for (const store of [postgres, back]) {
      expect((await store.listEventsForExport({}, 10)).map((e) => [e.transferId, e.event])).toEqual(keys.map((key) => [key, `x:${key}`]));
      expect((await store.getEvent(1))!.receivedCount).toBe(MAX_RECEIVED_COUNT);
      // Each copied key is the one ingest finds again: a repeat is a duplicate of its own event.
      for (const [i, key] of keys.entries()) expect(await store.saveEvent({ ...event(key), event: `x:${key}` })).toMatchObject({ id: i + 1, duplicate: true });
    }
  });
});
