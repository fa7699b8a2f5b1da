import { fdatasync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { SqliteStore } from '../../../src/store/sqlite/sqlite-store.js';
import type { NewEvent } from '../../../src/store/store.js';
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

describe('saving an event', () => {
  it('stores the first delivery of a transfer with its deliveries; a repeat only counts and dates itself', async () => {
    const store = new SqliteStore({ dataDir: makeTempDir(), durability: 'normal' });
    try {
      const first = await store.saveEvent(delivery(1_000));
      expect(first).toEqual({ id: expect.any(Number), duplicate: false, receivedCount: 1 });
      const repeats = await Promise.all([store.saveEvent(delivery(5_000)), store.saveEvent(delivery(9_000))]);
      expect(repeats).toEqual([
        { id: first.id, duplicate: true, receivedCount: 2 },
        { id: first.id, duplicate: true, receivedCount: 3 },
      ]);
      const stored = (await store.getEvent(first.id))!;
      expect(stored).toMatchObject({ receivedAt: 1_000, lastReceivedAt: 9_000, receivedCount: 3 });
      expect(stored.body.toString()).toContain('"n":1000'); // the first bytes are kept, not overwritten
      expect((await store.listDeliveries({ eventId: first.id }, { limit: 10 })).items).toHaveLength(1);
    } finally {
      await store.close();
    }
  });

  it('with durability full, paces its fsynced commits while busy: events arriving within the interval share one fsync', async () => {
    const fsyncs: number[] = [];
    const countingFsync = (fd: number, done: (err: NodeJS.ErrnoException | null) => void): void => {
      fsyncs.push(performance.now());
      fdatasync(fd, done);
    };
    const event = (n: number): NewEvent => ({ ...delivery(n), transferId: `transfer-${n}`, deliveries: [] });
    const paced = new SqliteStore({ dataDir: makeTempDir(), durability: 'full', fsync: countingFsync, commitIntervalMs: 100, paceCommitsWhen: () => true });
    try {
      // Ten events 5 ms apart: at most one fsync per 100 ms, so the last nine share one or two.
      const saved = await Promise.all(Array.from({ length: 10 }, (_, i) => sleep(i * 5).then(() => paced.saveEvent(event(i)))));
      expect(new Set(saved.map((s) => s.id)).size).toBe(10);
      expect(fsyncs.length).toBeLessThanOrEqual(3);
    } finally {
      await paced.close();
    }
    fsyncs.length = 0;
    const unpaced = new SqliteStore({ dataDir: makeTempDir(), durability: 'full', fsync: countingFsync, commitIntervalMs: 100, paceCommitsWhen: () => false });
    try {
      await Promise.all(Array.from({ length: 10 }, (_, i) => sleep(i * 5).then(() => unpaced.saveEvent(event(i)))));
      expect(fsyncs.length).toBeGreaterThanOrEqual(5);
    } finally {
      await unpaced.close();
    }
  });

  it('does not pace a sender that waits for each answer while the event loop is idle', async () => {
    const store = new SqliteStore({ dataDir: makeTempDir(), durability: 'full', commitIntervalMs: 200 });
    try {
      const started = performance.now();
      for (let i = 0; i < 3; i += 1) await store.saveEvent({ ...delivery(i), transferId: `transfer-${i}`, deliveries: [] });
      // Paced, the second and third commit would each wait for the 200 ms interval.
      expect(performance.now() - started).toBeLessThan(200);
    } finally {
      await store.close();
    }
  });
});
