import { getPriority } from 'node:os';
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';

// The module runs in threads of its own (the nice value of a thread is for good), from the build `npm test` makes first.
const MODULE = new URL('../../../dist/delivery/thread/thread-priority.js', import.meta.url).href;

/** In a new thread: optionally start at `startAt`, call setThreadNice(`nice`), report the thread's nice value and what was logged. */
function inThread(nice: number, startAt?: number): Promise<{ nice: number; logged: string[] }> {
  const source = `
    const { parentPort } = require('node:worker_threads');
    const { getPriority, setPriority } = require('node:os');
    import(${JSON.stringify(MODULE)}).then(({ currentThreadId, setThreadNice }) => {
      const tid = currentThreadId();
      ${startAt === undefined ? '' : `setPriority(tid, ${startAt});`}
      const logged = [];
      setThreadNice(${nice}, { info: (_fields, message) => logged.push(message) });
      parentPort.postMessage({ nice: getPriority(tid), logged });
    });`;
  const worker = new Worker(source, { eval: true });
  return new Promise((resolve, reject) => {
    worker.once('message', (report) => {
      void worker.terminate();
      resolve(report);
    });
    worker.once('error', reject);
  });
}

describe('setThreadNice', () => {
  it('gives the calling thread the nice value asked for, and leaves the thread that started it alone', async () => {
    await expect(inThread(7)).resolves.toEqual({ nice: 7, logged: [] });
    await expect(inThread(0)).resolves.toEqual({ nice: 0, logged: [] });
    expect(getPriority()).toBe(0); // this thread's own
  });

  it('keeps a higher nice value the thread already has (lowering one needs privileges), without complaint', async () => {
    await expect(inThread(10, 15)).resolves.toEqual({ nice: 15, logged: [] });
  });
});
