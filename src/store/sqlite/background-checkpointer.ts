import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

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
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
// The busy timeout only bounds how long a RESTART waits (for the writer, then for readers); PASSIVE never waits.
const db = new Database(workerData.path, { timeout: workerData.restartWaitMs });
const pageSize = db.pragma('page_size', { simple: true });
const timer = setInterval(() => {
  try {
    const [result] = db.pragma('wal_checkpoint(PASSIVE)');
    if (result.log * pageSize >= workerData.restartBytes) db.pragma('wal_checkpoint(RESTART)');
  } catch (err) {
    // Busy or failing now: the next tick tries again; the main connection keeps the data safe meanwhile.
  }
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
}

export function startBackgroundCheckpointer(options: CheckpointerOptions): BackgroundCheckpointer {
  const driver = createRequire(import.meta.url).resolve('better-sqlite3');
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    // It runs one timer and one pragma: a small heap keeps the thread's footprint to a few MB.
    resourceLimits: { maxOldGenerationSizeMb: 16, maxYoungGenerationSizeMb: 1 },
    workerData: { driver, path: options.path, intervalMs: options.intervalMs, restartBytes: options.restartBytes, restartWaitMs: options.restartWaitMs ?? 50 },
  });
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
