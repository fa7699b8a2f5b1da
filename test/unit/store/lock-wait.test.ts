import { join } from 'node:path';
import Database, { type BetterSqlite3 } from '../../../src/sqlite-driver.js';
import { afterAll, describe, expect, it } from 'vitest';
import { sampleTransferSucceeded } from '../../../src/samples/transfer-succeeded.js';
import { DATABASE_FILE, SqliteStore } from '../../../src/store/sqlite/sqlite-store.js';
import type { NewEvent } from '../../../src/store/event-store.js';
import { makeTempDir, removeTempDirs } from '../../helpers/temp-dir.js';

afterAll(() => removeTempDirs());

function newEvent(): NewEvent {
  const body = sampleTransferSucceeded();
  return { source: 'checkout', event: body.event, transferId: body.result.id, checkoutId: null, email: null, walletAddress: null, validation: 'valid', receivedAt: Date.now(), headers: {}, body: Buffer.from(JSON.stringify(body)) };
}

/** The longest a 5 ms timer was late while `during` ran: how long the event loop was blocked at a stretch. */
async function longestTimerLag(during: Promise<unknown>): Promise<number> {
  let longest = 0;
  let done = false;
  const probe = (async () => {
    while (!done) {
      const started = performance.now();
      await new Promise((resolve) => setTimeout(resolve, 5));
      longest = Math.max(longest, performance.now() - started - 5);
    }
  })();
  await during.finally(() => (done = true));
  await probe;
  return longest;
}

/** A store in a fresh data dir, and a second connection of our own already holding its write lock. */
function storeWithLockHeld(options: { busyTimeoutMs?: number; busyRetryMs?: number }): { store: SqliteStore; locker: BetterSqlite3.Database } {
  const dataDir = makeTempDir();
  const store = new SqliteStore({ dataDir, durability: 'full', ...options });
  const locker = new Database(join(dataDir, DATABASE_FILE));
  locker.exec('BEGIN IMMEDIATE');
  return { store, locker };
}

describe('a write lock held by another connection', () => {
  it('does not block the event loop while an ingest commit waits for it, and the commit lands once it is released', async () => {
    // A long busy timeout: a commit that waited for the lock synchronously would hold the loop for all of it.
    const { store, locker } = storeWithLockHeld({ busyTimeoutMs: 2_000 });
    try {
      setTimeout(() => locker.exec('ROLLBACK'), 1_000);
      const saving = store.saveEvent(newEvent());
      const lag = await longestTimerLag(saving);
      expect((await saving).duplicate).toBe(false);
      expect(lag).toBeLessThan(500);
      expect((await store.listEvents({}, { limit: 10 })).items).toHaveLength(1);
    } finally {
      locker.close();
      await store.close();
    }
  });

  it('fails the commit with store_unavailable once the lock outlasts the retry window, storing nothing', async () => {
    const { store, locker } = storeWithLockHeld({ busyRetryMs: 300 });
    try {
      await expect(store.saveEvent(newEvent())).rejects.toMatchObject({ code: 'store_unavailable', details: { sqlite: expect.stringMatching(/^SQLITE_BUSY/) } });
      locker.exec('ROLLBACK');
      expect((await store.listEvents({}, { limit: 10 })).items).toHaveLength(0);
    } finally {
      locker.close();
      await store.close();
    }
  });

  it('does not block the event loop while a write outside the group commits (a lease) waits for it', async () => {
    // SQLite's own busy handler would sleep through the whole wait with the loop blocked.
    const { store, locker } = storeWithLockHeld({ busyTimeoutMs: 2_000 });
    try {
      setTimeout(() => locker.exec('ROLLBACK'), 1_000);
      const acquiring = store.acquireLease('schema', 'node-a', 60_000);
      const lag = await longestTimerLag(acquiring);
      expect(await acquiring).toBe(true);
      expect(lag).toBeLessThan(500);
      expect(await store.acquireLease('schema', 'node-b', 60_000)).toBe(false);
    } finally {
      locker.close();
      await store.close();
    }
  });

  it('fails such a write with store_unavailable once the lock outlasts the busy timeout, changing nothing', async () => {
    const { store, locker } = storeWithLockHeld({ busyTimeoutMs: 300 });
    try {
      const started = performance.now();
      await expect(store.acquireLease('schema', 'node-a', 60_000)).rejects.toMatchObject({ code: 'store_unavailable', details: { sqlite: expect.stringMatching(/^SQLITE_BUSY/) } });
      expect(performance.now() - started).toBeGreaterThanOrEqual(300);
      locker.exec('ROLLBACK');
      expect(await store.acquireLease('schema', 'node-b', 60_000)).toBe(true);
    } finally {
      locker.close();
      await store.close();
    }
  });

  it('gives the connection its usual busy timeout back after a group commit, for the writes that may wait', async () => {
    const store = new SqliteStore({ dataDir: makeTempDir(), durability: 'full', busyTimeoutMs: 321 });
    try {
      await store.saveEvent(newEvent());
      expect(store.db.pragma('busy_timeout', { simple: true })).toBe(321);
    } finally {
      await store.close();
    }
  });
});
