import { closeSync, fsync, openSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { sampleTransferSucceeded } from '../../src/samples/transfer-succeeded.js';
import { DATABASE_FILE, SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { runCli } from '../helpers/cli-process.js';
import { postSigned, send, type Reply } from '../helpers/http.js';
import { startTestReceiver, TEST_SECRET, type TestReceiver } from '../helpers/receiver.js';
import { eventually, rulesDirWith, TEST_DELIVERY } from '../helpers/rules.js';
import { makeTempDir, removeTempDirs } from '../helpers/temp-dir.js';
import { startCountingSink, type CountingSink } from './support/counting-sink.js';
import { mountReadOnlyView, mountSmallTmpfs, unmount } from './support/mounts.js';
import { report, scale, timeLimit } from './support/soak.js';

const running: { close(): Promise<void> }[] = [];
const mounts: string[] = [];
afterEach(async () => {
  for (const item of running.splice(0).reverse()) await item.close();
});
afterAll(() => {
  for (const dir of mounts.splice(0)) unmount(dir);
  removeTempDirs();
});

const FAULT_POSTS = scale(8, 40);
/** Fewer under a held lock: each batch waits out the busy timeout with the event loop blocked (see docs/operations.md, "A lock held elsewhere"). */
const LOCKED_POSTS = scale(4, 20);

interface Sent {
  transferId: string;
  raw: Buffer;
}

function newEvent(padding = 0): Sent {
  const body = sampleTransferSucceeded();
  const raw = Buffer.from(JSON.stringify(padding > 0 ? { ...body, result: { ...body.result, note: 'n'.repeat(padding) } } : body));
  return { transferId: body.result.id, raw };
}

async function receiverWithSink(dataDir?: string): Promise<{ app: TestReceiver; sink: CountingSink }> {
  const sink = await startCountingSink();
  running.push(sink);
  const app = await startTestReceiver({
    ...(dataDir && { dataDir }),
    rulesDir: rulesDirWith({ 'all.yaml': `id: all\non: [transfer:succeeded]\nto:\n  url: ${sink.url}\ntimeout: 2s\nretry:\n  schedule: [0s, 100ms, 200ms, 400ms, 800ms]\n` }),
    delivery: TEST_DELIVERY,
    retention: { enabled: false },
  });
  running.push(app);
  return { app, sink };
}

/** A working receiver (one event stored), then a second connection of our own takes its write lock. */
async function receiverWithWriteLockHeld(): Promise<{ app: TestReceiver; sink: CountingSink; locker: Database.Database }> {
  const { app, sink } = await receiverWithSink();
  expect((await postSigned(app.webhookUrl(), newEvent().raw, TEST_SECRET)).status).toBe(200);
  const locker = new Database(join(app.dataDir, DATABASE_FILE));
  locker.exec('BEGIN IMMEDIATE');
  return { app, sink, locker };
}

/** Rows stored for a transfer id, read by a connection of our own (never the receiver's). */
function storedCount(dataDir: string, transferId: string): number {
  const db = new Database(join(dataDir, DATABASE_FILE), { readonly: true, fileMustExist: true });
  try {
    return (db.prepare('SELECT count(*) AS n FROM events WHERE transfer_id = ?').get(transferId) as { n: number }).n;
  } finally {
    db.close();
  }
}

/**
 * Posts `events` concurrently while a fault holds; every answer must be 200 (then the event is stored) or
 * 503 store_unavailable (then it is not). Returns the refused ones, still unstored.
 */
async function postDuringFault(app: TestReceiver, events: Sent[]): Promise<{ refused: Sent[]; acknowledged: Sent[]; replies: Reply[]; slowestMs: number }> {
  const started = performance.now();
  let slowestMs = 0;
  const replies = await Promise.all(
    events.map(async (event) => {
      const reply = await postSigned(app.webhookUrl(), event.raw, TEST_SECRET);
      slowestMs = Math.max(slowestMs, performance.now() - started);
      return reply;
    }),
  );
  const refused: Sent[] = [];
  const acknowledged: Sent[] = [];
  replies.forEach((reply, i) => {
    if (reply.status === 200) acknowledged.push(events[i]!);
    else {
      expect(reply.status, reply.text).toBe(503);
      expect(reply.json).toMatchObject({ error: { code: 'store_unavailable', message: expect.any(String) } });
      expect(reply.json.error).toHaveProperty('details');
      refused.push(events[i]!);
    }
  });
  return { refused, acknowledged, replies, slowestMs: Math.round(slowestMs) };
}

/** After the fault clears: refused events were never stored (first copy now), acknowledged ones were (duplicates now), all reach the sink. */
async function checkRecovery(app: TestReceiver, sink: CountingSink, fault: { refused: Sent[]; acknowledged: Sent[] }): Promise<void> {
  for (const event of fault.refused) expect(storedCount(app.dataDir, event.transferId), 'a refused event was stored').toBe(0);
  for (const event of fault.acknowledged) expect(storedCount(app.dataDir, event.transferId), 'an acknowledged event is missing').toBe(1);
  // The receiver recovers by itself: the sender's retry is accepted, as a first copy.
  const retried = await eventually(async () => {
    const reply = await postSigned(app.webhookUrl(), fault.refused[0]?.raw ?? newEvent().raw, TEST_SECRET);
    return reply.status === 200 ? reply : null;
  }, 10_000, 'ingest accepting again');
  expect(retried.json.duplicate).toBe(false);
  for (const event of fault.refused.slice(1)) {
    const reply = await postSigned(app.webhookUrl(), event.raw, TEST_SECRET);
    expect(reply.status).toBe(200);
    expect(reply.json.duplicate).toBe(false);
  }
  for (const event of fault.acknowledged) {
    const reply = await postSigned(app.webhookUrl(), event.raw, TEST_SECRET);
    expect(reply.json).toMatchObject({ duplicate: true });
  }
  expect((await send(`${app.url}/readyz`)).status).toBe(200);
  // Deliveries resume too: every event reaches the sink.
  const all = [...fault.refused, ...fault.acknowledged];
  await eventually(() => all.every((e) => sink.received.some((r) => r.body.equals(e.raw))), 10_000, 'every event at the sink');
}

describe('store faults: ingest answers 503, acknowledges only what it stored, and recovers by itself', () => {
  it(
    'the database locked by another writer (BEGIN IMMEDIATE held by a second connection)',
    async () => {
      const { app, sink, locker } = await receiverWithWriteLockHeld();
      let fault;
      let healthzMs = 0;
      try {
        // /healthz asked while the posts wait on the lock: how long the process looks unresponsive.
        const probe = (async () => {
          const t = performance.now();
          await send(`${app.url}/healthz`);
          healthzMs = Math.round(performance.now() - t);
        })();
        fault = await postDuringFault(app, Array.from({ length: LOCKED_POSTS }, () => newEvent()));
        await probe;
        expect(fault.acknowledged).toEqual([]);
        expect(fault.replies[0]!.json.error.details).toMatchObject({ sqlite: expect.stringMatching(/^SQLITE_BUSY/) });
        expect((await send(`${app.url}/readyz`)).status).toBe(503);
        expect((await send(`${app.url}/healthz`)).status).toBe(200);
      } finally {
        locker.exec('ROLLBACK');
        locker.close();
      }
      await checkRecovery(app, sink, fault);
      report('store-faults/locked', { posts: fault.replies.length, refused503: fault.refused.length, acknowledged: fault.acknowledged.length, lost: 0, slowestAnswerMs: fault.slowestMs, healthzDuringLockMs: healthzMs });
    },
    timeLimit(60_000, 180_000),
  );

  it(
    'a lock held for a moment (as the checkpoint thread\'s WAL restart does under load) is waited out: every post is acknowledged, the event loop stays free',
    async () => {
      const { app, sink, locker } = await receiverWithWriteLockHeld();
      // Longer than the 200 ms a synchronous write would wait, far shorter than the 2 s retry window.
      const released = new Promise<void>((resolve) => setTimeout(() => {
        locker.exec('ROLLBACK');
        locker.close();
        resolve();
      }, 500));
      const healthz = (async () => {
        await new Promise((resolve) => setTimeout(resolve, 100));
        const t = performance.now();
        expect((await send(`${app.url}/healthz`)).status).toBe(200);
        return performance.now() - t;
      })();
      const events = Array.from({ length: LOCKED_POSTS }, () => newEvent());
      const fault = await postDuringFault(app, events);
      await released;
      const healthzMs = await healthz;
      expect(fault.refused).toEqual([]);
      expect(fault.acknowledged).toHaveLength(events.length);
      // Answered while the lock was held: nothing blocked the event loop for the lock's duration.
      expect(healthzMs).toBeLessThan(400);
      await checkRecovery(app, sink, fault);
      report('store-faults/locked-briefly', { posts: events.length, acknowledged: fault.acknowledged.length, slowestAnswerMs: fault.slowestMs, healthzDuringLockMs: Math.round(healthzMs) });
    },
    timeLimit(60_000, 180_000),
  );

  it(
    'the database read-only (SQLITE_READONLY from the receiver\'s own connection: query_only)',
    async () => {
      // Root ignores file modes and a bind mount cannot be remounted read-only while the database is open,
      // so the running receiver's connection is switched to read-only: SQLite then refuses every write with
      // SQLITE_READONLY, the error a read-only file or volume gives.
      const { app, sink } = await receiverWithSink();
      const db = (app.store as SqliteStore).db;
      db.pragma('query_only = ON');
      let fault;
      try {
        fault = await postDuringFault(app, Array.from({ length: FAULT_POSTS }, () => newEvent()));
        expect(fault.acknowledged).toEqual([]);
        expect(fault.replies[0]!.json.error.details).toMatchObject({ sqlite: expect.stringMatching(/^SQLITE_READONLY/) });
        expect((await send(`${app.url}/readyz`)).status).toBe(503);
      } finally {
        db.pragma('query_only = OFF');
      }
      await checkRecovery(app, sink, fault);
      report('store-faults/read-only', { posts: fault.replies.length, refused503: fault.refused.length, acknowledged: fault.acknowledged.length, lost: 0, slowestAnswerMs: fault.slowestMs });
    },
    timeLimit(30_000, 120_000),
  );

  it(
    'the disk full (a 32 MiB tmpfs filled up; SQLITE_FULL through max_page_count where mounting is not allowed)',
    async () => {
      const tmpfs = mountSmallTmpfs(32 * 1024 * 1024);
      if (tmpfs) mounts.push(tmpfs);
      const { app, sink } = await receiverWithSink(tmpfs ? join(tmpfs, 'data') : undefined);
      const warmup = newEvent(2000);
      expect((await postSigned(app.webhookUrl(), warmup.raw, TEST_SECRET)).status).toBe(200);
      const filler = tmpfs ? join(tmpfs, 'filler') : null;
      const db = (app.store as SqliteStore).db;
      if (filler) {
        // Fill every free byte.
        const fd = openSync(filler, 'w');
        const block = Buffer.alloc(64 * 1024, 1);
        try {
          for (;;) writeSync(fd, block);
        } catch {
          // ENOSPC: the disk is full
        }
        try {
          for (;;) writeSync(fd, block.subarray(0, 512));
        } catch {
          // and the last few bytes too
        }
        closeSync(fd);
      } else {
        db.pragma(`max_page_count = ${Number(db.pragma('page_count', { simple: true }))}`);
      }
      let fault;
      try {
        // Bodies big enough to need new pages, so nothing fits in space SQLite already holds.
        fault = await postDuringFault(app, Array.from({ length: FAULT_POSTS }, () => newEvent(200_000)));
        expect(fault.refused.length).toBeGreaterThan(0);
        expect(fault.replies.find((r) => r.status === 503)!.json.error.details).toMatchObject({ sqlite: expect.stringMatching(/^SQLITE_FULL/) });
        for (const event of fault.refused) expect(storedCount(app.dataDir, event.transferId)).toBe(0);
      } finally {
        if (filler) rmSync(filler);
        else db.pragma('max_page_count = 4294967294');
      }
      await checkRecovery(app, sink, fault);
      report('store-faults/disk-full', {
        via: tmpfs ? 'tmpfs' : 'max_page_count', posts: fault.replies.length, refused503: fault.refused.length,
        acknowledged: fault.acknowledged.length, lost: 0, slowestAnswerMs: fault.slowestMs,
      });
    },
    timeLimit(30_000, 120_000),
  );

  it('a failed WAL fsync answers 503; the sender\'s retry is then acknowledged as the copy already committed', async () => {
    // The store's fsync seam: commits reach the WAL, but fsync reports EIO, so nothing is acknowledged.
    let failing = true;
    const dataDir = makeTempDir();
    const store = new SqliteStore({
      dataDir,
      durability: 'full',
      fsync: (fd, callback) => (failing ? setImmediate(() => callback(Object.assign(new Error('EIO: i/o error, fsync'), { code: 'EIO' }))) : fsync(fd, callback)),
    });
    try {
      const event = newEvent();
      const input = { source: 'checkout', event: 'transfer:succeeded', transferId: event.transferId, checkoutId: null, email: null, walletAddress: null, validation: 'valid' as const, receivedAt: Date.now(), headers: {}, body: event.raw };
      await expect(store.saveEvent(input)).rejects.toMatchObject({ code: 'store_unavailable' });
      failing = false;
      // The transaction did commit before its fsync failed: a retry finds it (never two rows).
      await expect(store.saveEvent(input)).resolves.toMatchObject({ duplicate: true, receivedCount: 2 });
      expect((store.db.prepare('SELECT count(*) AS n FROM events').get() as { n: number }).n).toBe(1);
    } finally {
      await store.close();
    }
  });

  it('refuses to start on a read-only data directory, with exit 1 and a message (real read-only bind mount; skipped where mounting is not allowed)', async (context) => {
    const dataDir = makeTempDir();
    await new SqliteStore({ dataDir, durability: 'full' }).close();
    const view = mountReadOnlyView(dataDir);
    if (!view) context.skip();
    mounts.push(view!);
    const proc = runCli(['serve'], { env: { HOOKRELAY_HOST: '127.0.0.1', HOOKRELAY_PORT: '0', HOOKRELAY_DATA_DIR: view!, HOOKRELAY_RULES_DIR: makeTempDir(), HOOKRELAY_SECRET: 's', HOOKRELAY_ADMIN_TOKEN: 'read-only-admin-token-0123' } });
    const { code } = await proc.exited;
    expect(code).toBe(1);
    expect(proc.stderr()).toMatch(/database|read-only|readonly/i);
    expect(proc.stdout()).not.toContain('hookrelay listening');
  });
});
