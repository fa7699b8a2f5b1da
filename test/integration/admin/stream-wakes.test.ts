import { createServer, get, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { StreamHub, wakeGapMs } from '../../../src/admin/api/stream/stream-hub.js';
import { SqliteStore } from '../../../src/store/sqlite/sqlite-store.js';
import { makeTempDir, removeTempDirs } from '../../helpers/temp-dir.js';

/** A fresh store that notes when streams read it, and stores one more event on each `storeOne()`. */
function countingStore() {
  const store = new SqliteStore({ dataDir: makeTempDir(), durability: 'normal' });
  const readsAt: number[] = [];
  const read = store.readNewEvents.bind(store);
  store.readNewEvents = (...args) => {
    readsAt.push(performance.now());
    return read(...args);
  };
  let stored = 0;
  const storeOne = (): void => {
    stored += 1;
    void store.saveEvent({
      source: 'checkout', event: 'transfer:succeeded', transferId: `tr-${stored}`, checkoutId: null, email: null, walletAddress: null,
      validation: 'valid', receivedAt: Date.now(), headers: {}, body: Buffer.from('{}'), deliveries: [],
    });
  };
  return { store, readsAt, storeOne, stored: () => stored };
}

let server: Server | undefined;
const clients: IncomingMessage[] = [];
/** What each client has received so far, and when its stream ended. */
const received: string[] = [];
const ended: Promise<void>[] = [];

let store: SqliteStore | undefined;

afterEach(async () => {
  for (const client of clients.splice(0)) client.destroy();
  received.length = 0;
  ended.length = 0;
  await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
  server = undefined;
  await store?.close();
  store = undefined;
  removeTempDirs();
});

/** `count` real SSE clients of `hub`, every stream following live from the same position. */
async function openStreams(hub: StreamHub, count: number): Promise<void> {
  server = createServer((_req, res) => void hub.open(res, { store: store!, filter: {}, includeBody: false, start: { tx: null, id: 0 } }));
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await Promise.all(Array.from({ length: count }, () => new Promise<void>((resolve, reject) => {
    get({ host: '127.0.0.1', port, path: '/' }, (res) => {
      const index = clients.push(res) - 1;
      received[index] = '';
      ended[index] = new Promise((done) => res.on('end', done));
      res.setEncoding('utf8');
      res.on('data', (text: string) => {
        received[index] += text;
        if (text.includes('event: ready')) resolve();
      });
    }).on('error', reject);
  })));
  expect(hub.stats().open).toBe(count);
}

describe('StreamHub wakes', () => {
  it('every 10 ms at most with few streams, and every ms per open stream with many', () => {
    expect(wakeGapMs(1)).toBe(10);
    expect(wakeGapMs(10)).toBe(10);
    expect(wakeGapMs(50)).toBe(50);
    expect(wakeGapMs(100)).toBe(100);
  });

  it.each([1, 40])('with %i streams open, an event stored every millisecond wakes them (one shared read) no more often than that', async (count) => {
    const hub = new StreamHub({ max: 100, heartbeatMs: 60_000, bufferBytes: 1024 * 1024, stallTimeoutMs: 30_000 });
    const counting = countingStore();
    store = counting.store;
    const { readsAt, storeOne, stored } = counting;
    await openStreams(hub, count);
    await sleep(50);
    readsAt.length = 0;
    const windowMs = 400;
    const startedAt = performance.now();
    const storing = setInterval(storeOne, 1);
    await sleep(windowMs);
    clearInterval(storing);
    const stoppedAt = performance.now();
    await sleep(wakeGapMs(count) + 20);
    hub.close();
    await Promise.all(ended);
    // Every stream stood at the same position, so each wake is one read, shared by all of them. Timers count
    // whole milliseconds, so two wakes may come up to 1 ms closer than the gap; one more for the window's end.
    const gaps = Math.ceil((stoppedAt - startedAt) / (wakeGapMs(count) - 1));
    expect(readsAt.length).toBeLessThanOrEqual(gaps + 1);
    // …and the commits keep waking them: every client got every event stored, once.
    expect(readsAt.length).toBeGreaterThanOrEqual(count === 1 ? 5 : 2);
    expect(stored()).toBeGreaterThan(50);
    for (const text of received) expect(text.match(/^event: event$/gm)?.length).toBe(stored());
  });
});
