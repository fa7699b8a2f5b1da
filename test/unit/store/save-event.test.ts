import { fdatasync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { SqliteStore } from '../../../src/store/sqlite/sqlite-store.js';
import type { NewEvent } from '../../../src/store/event-store.js';
import { makeTempDir, removeTempDirs } from '../../helpers/temp-dir.js';

afterAll(() => removeTempDirs());

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function delivery(receivedAt: number): NewEvent {
  return {
    source: 'checkout', event: 'transfer:succeeded', transferId: 'transfer-1', checkoutId: null, email: null, walletAddress: null,
    validation: 'valid', receivedAt, headers: {}, body: Buffer.from(`{"event":"transfer:succeeded","result":{"id":"transfer-1"},"n":${receivedAt}}`),
    deliveries: [{ ruleId: 'fwd', ruleSetHash: 'h', body: null, contentType: 'application/json' }],
  };
}

// What every store does with an event is in the contract suite (test/contract/); these are SQLite's commit pacing.
describe('saving an event on SQLite', () => {
  it('with durability full, paces its fsynced commits while busy: events arriving within the interval share one fsync', async () => {
    const fsyncs: number[] = [];
    const countingFsync = (fd: number, done: (err: NodeJS.ErrnoException | null) => void): void => {
      fsyncs.push(performance.now());
      fdatasync(fd, done);
    };
    const event = (n: number): NewEvent => ({ ...delivery(n), transferId: `transfer-${n}`, deliveries: [] });
    // A long interval keeps the assertions clear of a busy machine's late timers.
    const paced = new SqliteStore({ dataDir: makeTempDir(), durability: 'full', fsync: countingFsync, commitIntervalMs: 1_000, paceCommitsWhen: () => true });
    try {
      // Ten events 5 ms apart: at most one fsync per second, so the last nine share one or two.
      const saved = await Promise.all(Array.from({ length: 10 }, (_, i) => sleep(i * 5).then(() => paced.saveEvent(event(i)))));
      expect(new Set(saved.map((s) => s.id)).size).toBe(10);
      expect(fsyncs.length).toBeLessThanOrEqual(3);
    } finally {
      await paced.close();
    }
    fsyncs.length = 0;
    const unpaced = new SqliteStore({ dataDir: makeTempDir(), durability: 'full', fsync: countingFsync, commitIntervalMs: 1_000, paceCommitsWhen: () => false });
    try {
      // Unpaced, a sender that waits for each answer gets a commit and an fsync of its own each time.
      for (let i = 0; i < 10; i += 1) await unpaced.saveEvent(event(i));
      expect(fsyncs.length).toBeGreaterThanOrEqual(10);
    } finally {
      await unpaced.close();
    }
  });

  it('does not pace a sender that waits for each answer while the event loop is idle', async () => {
    const store = new SqliteStore({ dataDir: makeTempDir(), durability: 'full', commitIntervalMs: 2_000 });
    try {
      const started = performance.now();
      for (let i = 0; i < 3; i += 1) await store.saveEvent({ ...delivery(i), transferId: `transfer-${i}`, deliveries: [] });
      // Paced, the second and third commit would each wait for the 2 s interval: 4 s in all.
      expect(performance.now() - started).toBeLessThan(2_000);
    } finally {
      await store.close();
    }
  });
});
