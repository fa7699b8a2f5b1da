import { afterEach, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { PostgresStore } from '../../../src/store/postgres/postgres-store.js';
import type { NewEvent } from '../../../src/store/event-store.js';
import { createTestDatabase, describeWithPostgres, TEST_POOL, type TestDatabase } from '../../helpers/postgres.js';

const open: { store: PostgresStore; database: TestDatabase }[] = [];

async function storeWith(commitIntervalMs: number): Promise<PostgresStore> {
  const database = await createTestDatabase();
  const store = await PostgresStore.open({ url: database.url, ...TEST_POOL, commitIntervalMs });
  open.push({ store, database });
  return store;
}

const event = (): NewEvent => ({
  source: 'checkout', event: 'transfer:succeeded', transferId: randomUUID(), checkoutId: null, email: null, walletAddress: null,
  validation: 'valid', receivedAt: Date.now(), headers: { 'content-type': 'application/json' }, body: Buffer.from('{}'),
});

/** Saves `count` events at once and returns how long the last of them took to be acknowledged. */
async function saveTogether(store: PostgresStore, count: number): Promise<number> {
  const started = performance.now();
  await Promise.all(Array.from({ length: count }, () => store.saveEvent(event())));
  return performance.now() - started;
}

describeWithPostgres('ingest commits gather under steady load (commitIntervalMs)', () => {
  afterEach(async () => {
    for (const { store, database } of open.splice(0)) {
      await store.close();
      await database.drop();
    }
  });

  it('holds the next batch after a batch of several events, never a lone sender', async () => {
    const store = await storeWith(300);
    expect(await saveTogether(store, 1)).toBeLessThan(250); // a lone sender is not held
    await saveTogether(store, 6); // one batch of six: arrivals are concurrent
    const held = await saveTogether(store, 1);
    expect(held).toBeGreaterThanOrEqual(250);
    // That batch held one event: the next one is not held again.
    expect(await saveTogether(store, 1)).toBeLessThan(250);
  });

  it('never holds a batch when it is 0', async () => {
    const store = await storeWith(0);
    await saveTogether(store, 6);
    expect(await saveTogether(store, 1)).toBeLessThan(250);
  });
});
