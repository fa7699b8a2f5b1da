import { readlinkSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { getPriority, setPriority } from 'node:os';
import type { Logger } from 'pino';

/**
 * Gives the calling thread a nice value of its own. Linux schedules threads one by one and `setpriority` takes a
 * thread id there; /proc/thread-self names the calling thread's id. A process started at a higher nice value
 * already yields more, and only a privileged one may lower it: the thread then keeps the process's. Elsewhere
 * the thread keeps the process's priority too, which is only slower under load, so that is logged, not an error.
 */
export function setThreadNice(nice: number, logger: Logger): void {
  if (nice === 0) return; // asked for nothing: no need for Linux, nothing to log elsewhere
  try {
    const tid = currentThreadId();
    if (getPriority(tid) < nice) setPriority(tid, nice);
  } catch (err) {
    logger.info({ err: (err as Error).message }, 'the delivery thread keeps the priority of the process (delivery.threadNice needs Linux)');
  }
}

/** The kernel's id of the calling thread (Linux), which `setpriority` and `getpriority` take. */
export function currentThreadId(): number {
  return Number(readlinkSync('/proc/thread-self').split('/').pop());
}

/**
 * libuv starts its thread pool on first use, and a new thread inherits the nice value of the thread that
 * creates it. The receiver calls this before it starts the delivery thread, so that the pool (which syncs the
 * receiver's WAL before each acknowledgement) is never started by a thread that lowered its priority.
 */
export async function startThreadPool(): Promise<void> {
  await stat('.');
}
