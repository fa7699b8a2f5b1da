import { openSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { sqliteDriverPath } from '../../sqlite-driver.js';

/**
 * Runs WAL checkpoints on a thread of their own. SQLite's automatic checkpoint runs inside whichever commit
 * crosses the threshold, on the event loop, and fsyncs the database file there; with this thread the main
 * connection sets wal_autocheckpoint=0 and commits never carry that cost. PASSIVE checkpoints never block
 * the writer. If the thread dies, `onFailure` lets the store fall back to automatic checkpoints.
 *
 * A PASSIVE checkpoint alone never lets the WAL start over under steady load: SQLite rewinds the WAL only
 * when a writer begins after *every* frame has been checkpointed, and commits keep landing while the
 * checkpoint runs, so the file grows for as long as the load lasts (hundreds of MB in seconds), and every
 * fsync then also extends the file. Once the WAL passes `restartBytes` the thread therefore follows its
 * PASSIVE pass with a RESTART, which briefly holds off writers to copy the few frames left and makes the
 * next commit write from the start of the file again.
 *
 * A PASSIVE pass that does not catch up with the writer does not sync the database file (SQLite syncs it
 * only once every frame is copied), so left alone the RESTART would sync the pages of all the passes before
 * it while writers wait, each time a burst of slow requests. The thread therefore
 * syncs the database file itself after each pass that found the WAL changed, holding nobody off: the RESTART
 * has only the frames of the last few milliseconds to copy and sync, and the page cache is
 * flushed a quarter second's worth at a time, so the commits' own WAL fsyncs meet smaller bursts.
 */
const WORKER_SOURCE = `
const { fdatasyncSync } = require('node:fs');
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
// The busy timeout only bounds how long a RESTART waits (for the writer, then for readers); PASSIVE never waits.
const db = new Database(workerData.path, { timeout: workerData.restartWaitMs });
const pageSize = db.pragma('page_size', { simple: true });
// Frames in the WAL and frames copied after the last pass: a pass that finds both unchanged has nothing to sync.
let previous = { log: 0, checkpointed: 0 };
const timer = setInterval(() => {
  const steps = [];
  try {
    const [result] = db.pragma('wal_checkpoint(PASSIVE)');
    const changed = result.log !== previous.log || result.checkpointed !== previous.checkpointed;
    previous = result;
    steps.push('passive');
    if (changed && workerData.databaseFd !== null) {
      try {
        fdatasyncSync(workerData.databaseFd);
        steps.push('sync-database');
      } catch {
        // Only a head start is lost: the RESTART still syncs the file itself before the WAL starts over.
        steps.push('sync-failed');
      }
    }
    if (result.log * pageSize >= workerData.restartBytes) {
      const [restart] = db.pragma('wal_checkpoint(RESTART)');
      steps.push(restart.busy ? 'restart-busy' : 'restart');
    }
  } catch (err) {
    // Busy or failing now: the next tick tries again; the main connection keeps the data safe meanwhile.
    steps.push('failed');
  }
  if (workerData.reportPasses) parentPort.postMessage(steps);
}, workerData.intervalMs);
parentPort.on('message', (message) => {
  if (message === 'stop') {
    clearInterval(timer);
    db.close();
    parentPort.close();
  }
});
`;

export interface BackgroundCheckpointer {
  stop(): Promise<void>;
}

export interface CheckpointerOptions {
  path: string;
  intervalMs: number;
  /** WAL size (frames in the log, in bytes) past which the WAL is made to start over. */
  restartBytes: number;
  /**
   * Longest a RESTART waits, first for the write lock, then for readers of old frames (default 50 ms). While
   * it holds the write lock, commits on the main connection wait; with a PASSIVE pass just before, only the
   * few frames written since are left to copy.
   */
  restartWaitMs?: number;
  onFailure: (err: unknown) => void;
  /** Test seam: the steps of each pass, in order (passive, sync-database, sync-failed, restart, restart-busy, failed). */
  onPass?: (steps: string[]) => void;
  /** Test seam: the descriptor the thread syncs (default: one opened on `path`, see databaseDescriptor). */
  syncDescriptor?: number;
}

/**
 * One read-only descriptor per database file for the thread's fdatasync, opened once and never closed:
 * closing any descriptor of a file drops every POSIX lock this process holds on it, those of SQLite's own
 * connections included, and another process could then take the database for unused and remove its WAL.
 */
const databaseDescriptors = new Map<string, number>();

function databaseDescriptor(path: string): number | null {
  let fd = databaseDescriptors.get(path);
  if (fd === undefined) {
    try {
      fd = openSync(path, 'r');
    } catch {
      return null; // the thread fails to open the database too, and reports it
    }
    databaseDescriptors.set(path, fd);
  }
  return fd;
}

export function startBackgroundCheckpointer(options: CheckpointerOptions): BackgroundCheckpointer {
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    // It runs one timer and one pragma: a small heap keeps the thread's footprint to a few MB.
    resourceLimits: { maxOldGenerationSizeMb: 16, maxYoungGenerationSizeMb: 1 },
    workerData: {
      driver: sqliteDriverPath,
      path: options.path,
      databaseFd: options.syncDescriptor ?? databaseDescriptor(options.path),
      intervalMs: options.intervalMs,
      restartBytes: options.restartBytes,
      restartWaitMs: options.restartWaitMs ?? 50,
      reportPasses: options.onPass !== undefined,
    },
  });
  if (options.onPass) worker.on('message', options.onPass);
  let stopping = false;
  const exited = new Promise<void>((resolve) => {
    worker.once('exit', (code) => {
      if (!stopping) options.onFailure(new Error(`checkpoint thread exited with code ${code}`));
      resolve();
    });
  });
  worker.on('error', (err) => options.onFailure(err));
  worker.unref();
  return {
    stop: async () => {
      stopping = true;
      // Referenced while stopping: a shutdown waiting on nothing else must not end before the thread has.
      worker.ref();
      worker.postMessage('stop');
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([exited, new Promise<void>((resolve) => (timer = setTimeout(resolve, 2000)))]);
      clearTimeout(timer);
      await worker.terminate();
    },
  };
}
