import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/**
 * Runs WAL checkpoints on a thread of their own. SQLite's automatic checkpoint runs inside whichever commit
 * crosses the threshold, on the event loop, and fsyncs the database file there; with this thread the main
 * connection sets wal_autocheckpoint=0 and commits never carry that cost. PASSIVE checkpoints never block
 * the writer. If the thread dies, `onFailure` lets the store fall back to automatic checkpoints.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.path, { timeout: 0 });
const timer = setInterval(() => {
  try {
    db.pragma('wal_checkpoint(PASSIVE)');
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

export function startBackgroundCheckpointer(options: { path: string; intervalMs: number; onFailure: (err: unknown) => void }): BackgroundCheckpointer {
  const driver = createRequire(import.meta.url).resolve('better-sqlite3');
  const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { driver, path: options.path, intervalMs: options.intervalMs } });
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
