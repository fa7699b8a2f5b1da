import { statSync } from 'node:fs';
import Database, { type BetterSqlite3 } from '../../../src/sqlite-driver.js';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { sampleTransferSucceeded } from '../../../src/samples/transfer-succeeded.js';
import { startBackgroundCheckpointer, type CheckpointerOptions } from '../../../src/store/sqlite/background-checkpointer.js';
import { DATABASE_FILE, SqliteStore } from '../../../src/store/sqlite/sqlite-store.js';
import { eventually } from '../../helpers/rules.js';
import { makeTempDir, removeTempDirs } from '../../helpers/temp-dir.js';

afterAll(() => removeTempDirs());

/**
 * Runs `body` against a WAL database nothing checkpoints but a thread under test (20 ms passes, 256 KiB restart
 * size), with the steps of each of its passes.
 */
async function observePasses(options: Partial<CheckpointerOptions>, body: (db: BetterSqlite3.Database, passes: string[][]) => Promise<void>): Promise<void> {
  const path = join(makeTempDir(), 'passes.db');
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma('wal_autocheckpoint = 0');
  db.exec('CREATE TABLE t (x BLOB)');
  const passes: string[][] = [];
  const checkpointer = startBackgroundCheckpointer({ path, intervalMs: 20, restartBytes: 256 * 1024, onFailure: () => {}, onPass: (steps) => passes.push(steps), ...options });
  try {
    await body(db, passes);
  } finally {
    await checkpointer.stop();
    db.close();
  }
}

/** About 400 KB of WAL in one commit: past the 256 KiB restart size. */
function fillWal(db: BetterSqlite3.Database): void {
  const insert = db.prepare('INSERT INTO t VALUES (?)');
  db.transaction(() => {
    for (let i = 0; i < 100; i++) insert.run(Buffer.alloc(4000));
  })();
}

/** The first pass that made the WAL start over, once there is one. */
async function restartingPass(passes: string[][]): Promise<string[] | undefined> {
  await eventually(() => passes.some((steps) => steps.includes('restart')), 5000, 'a pass that restarts the WAL');
  return passes.find((steps) => steps.includes('restart'));
}

describe('background WAL checkpoints', () => {
  it('moves committed pages into the database file from its own thread while commits never checkpoint', async () => {
    const dataDir = makeTempDir();
    const store = new SqliteStore({ dataDir, durability: 'normal', checkpointIntervalMs: 50 });
    try {
      expect(store.db.pragma('wal_autocheckpoint', { simple: true })).toBe(0);
      const fileBefore = statSync(join(dataDir, DATABASE_FILE)).size;
      await Promise.all(Array.from({ length: 2000 }, () => {
        const body = sampleTransferSucceeded();
        return store.saveEvent({ source: 'checkout', event: body.event, transferId: body.result.id, checkoutId: null, email: null, walletAddress: null, validation: 'valid', receivedAt: Date.now(), headers: {}, body: Buffer.from(JSON.stringify(body)) });
      }));
      // The events reach the main file only through a checkpoint, and only the thread runs them.
      await eventually(() => statSync(join(dataDir, DATABASE_FILE)).size > fileBefore + 1_000_000, 5000, 'a background checkpoint');
      expect((await store.listEvents({}, { limit: 5000 })).items).toHaveLength(2000);
    } finally {
      await store.close();
    }
  });

  // Commits back to back, as under sustained load: a PASSIVE checkpoint never finds the WAL fully copied
  // when a writer begins, so without the RESTART the file would keep growing for as long as the load lasts.
  async function walSizeAfterSustainedLoad(walRestartBytes: number): Promise<number> {
    const dataDir = makeTempDir();
    const store = new SqliteStore({ dataDir, durability: 'normal', checkpointIntervalMs: 20, walRestartBytes });
    try {
      // A fixed amount of writing (not a fixed time), so a busy machine gives the same WAL volume: without
      // the restart it leaves a WAL of well over 100 MB.
      for (let written = 0; written < 30_000; written += 20) {
        await Promise.all(Array.from({ length: 20 }, () => {
          const body = sampleTransferSucceeded();
          return store.saveEvent({ source: 'checkout', event: body.event, transferId: body.result.id, checkoutId: null, email: null, walletAddress: null, validation: 'valid', receivedAt: Date.now(), headers: {}, body: Buffer.from(JSON.stringify(body)) });
        }));
      }
      return statSync(join(dataDir, `${DATABASE_FILE}-wal`)).size;
    } finally {
      await store.close();
    }
  }

  it('makes the WAL start over once it passes the restart size, so it stays bounded under sustained commits', async () => {
    const bounded = await walSizeAfterSustainedLoad(256 * 1024);
    // journal_size_limit is 4x the restart size and a WAL that started over is truncated back to it; the
    // margin is for the frames written between the thread's checks on a busy machine.
    expect(bounded).toBeLessThanOrEqual(16 * 1024 * 1024);
  });

  it('syncs the database file after each pass that copied frames, before any RESTART', async () => {
    await observePasses({}, async (db, passes) => {
      // A small WAL: the pass that copies it syncs the file; passes with nothing new to copy do not. A pass
      // that runs while the commit starts the WAL over sees it empty, a change too: then two passes sync.
      await eventually(() => passes.length >= 1, 5000, 'a first pass');
      db.prepare('INSERT INTO t VALUES (?)').run(Buffer.alloc(1000));
      const seen = passes.length;
      await eventually(() => passes.length >= seen + 5, 5000, 'five more passes');
      const afterInsert = passes.slice(seen, seen + 5);
      const syncing = afterInsert.filter((steps) => steps.includes('sync-database'));
      expect(syncing.length).toBeGreaterThanOrEqual(1);
      expect(syncing.length).toBeLessThanOrEqual(2);
      expect(syncing.every((steps) => steps.join() === 'passive,sync-database')).toBe(true);
      const lastSync = afterInsert.findLastIndex((steps) => steps.includes('sync-database'));
      expect(afterInsert.slice(lastSync + 1)).toEqual(afterInsert.slice(lastSync + 1).map(() => ['passive']));
      expect(lastSync).toBeLessThanOrEqual(2);
      // Past the restart size: the pass copies and syncs, then the WAL starts over.
      fillWal(db);
      expect(await restartingPass(passes)).toEqual(['passive', 'sync-database', 'restart']);
    });
  });

  it('still makes the WAL start over when its own sync of the database file fails', async () => {
    // A descriptor number nothing has open: fdatasync fails with EBADF.
    await observePasses({ syncDescriptor: 1_000_000 }, async (db, passes) => {
      fillWal(db);
      expect(await restartingPass(passes)).toEqual(['passive', 'sync-failed', 'restart']);
    });
  });

  it('reports a thread that cannot run, so the store can fall back to automatic checkpoints', async () => {
    const failures: unknown[] = [];
    const checkpointer = startBackgroundCheckpointer({ path: join(makeTempDir(), 'missing-dir', 'x.db'), intervalMs: 50, restartBytes: 1 << 20, onFailure: (err) => failures.push(err) });
    await eventually(() => failures.length > 0, 5000, 'the failure to be reported');
    await checkpointer.stop();
    expect(failures.length).toBeGreaterThan(0);
  });
});
