import { createServer, get, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { StreamHub, wakeGapMs } from '../../../src/admin/api/stream/stream-hub.js';
import type { NewEventReader, Store } from '../../../src/store/store.js';

/** A store with no events that notes when it is read, and lets the test announce commits. */
function countingStore() {
  const listeners = new Set<() => void>();
  const readsAt: number[] = [];
  const store: NewEventReader & Pick<Store, 'onEventsStored'> = {
    streamPosition: async () => ({ tx: null, id: 0 }),
    readNewEvents: async (_filter, after) => {
      readsAt.push(performance.now());
      return { events: [], position: after, heldBack: false };
    },
    onEventsStored(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
  return { store, readsAt, commit: () => listeners.forEach((listener) => listener()) };
}

let server: Server | undefined;
const clients: IncomingMessage[] = [];

afterEach(async () => {
  for (const client of clients.splice(0)) client.destroy();
  await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
  server = undefined;
});

/** `count` real SSE clients of `hub`, every stream following live from the same position. */
async function openStreams(hub: StreamHub, store: ReturnType<typeof countingStore>['store'], count: number): Promise<void> {
  server = createServer((_req, res) => void hub.open(res, { store, filter: {}, includeBody: false, start: { tx: null, id: 0 } }));
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await Promise.all(Array.from({ length: count }, () => new Promise<void>((resolve, reject) => {
    get({ host: '127.0.0.1', port, path: '/' }, (res) => {
      clients.push(res);
      res.on('data', (chunk: Buffer) => chunk.includes('event: ready') && resolve());
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

  it.each([1, 40])('with %i streams open, a commit every millisecond wakes them (one shared read) no more often than that', async (count) => {
    const hub = new StreamHub({ max: 100, heartbeatMs: 60_000, bufferBytes: 1024 * 1024, stallTimeoutMs: 30_000 });
    const { store, readsAt, commit } = countingStore();
    await openStreams(hub, store, count);
    await new Promise((resolve) => setTimeout(resolve, 50));
    readsAt.length = 0;
    const windowMs = 400;
    const startedAt = performance.now();
    const commits = setInterval(commit, 1);
    await new Promise((resolve) => setTimeout(resolve, windowMs));
    clearInterval(commits);
    const stoppedAt = performance.now();
    await new Promise((resolve) => setTimeout(resolve, wakeGapMs(count) + 20));
    hub.close();
    // Every stream stood at the same position, so each wake is one read, shared by all of them. Timers count
    // whole milliseconds, so two wakes may come up to 1 ms closer than the gap; one more for the window's end.
    const gaps = Math.ceil((stoppedAt - startedAt) / (wakeGapMs(count) - 1));
    expect(readsAt.length).toBeLessThanOrEqual(gaps + 1);
    // …and the commits do keep waking them.
    expect(readsAt.length).toBeGreaterThanOrEqual(count === 1 ? 5 : 2);
  });
});
