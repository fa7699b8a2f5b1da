export interface Interruptible {
  /** Aborted on the first Ctrl-C (SIGINT) or SIGTERM. */
  signal: AbortSignal;
  /** Removes the handlers (call when the operation is over). */
  dispose(): void;
}

/** Exit status of a command stopped by Ctrl-C, as shells report it (128 + SIGINT). */
export const INTERRUPTED_EXIT_CODE = 130;

/**
 * Turns the first Ctrl-C into a request to stop at the next safe point (a batch boundary), so nothing is
 * left half done; a second Ctrl-C exits at once (SQLite rolls back a transaction that did not commit).
 */
export function onInterrupt(what: string): Interruptible {
  const controller = new AbortController();
  const handler = (): void => {
    if (controller.signal.aborted) process.exit(INTERRUPTED_EXIT_CODE);
    process.stderr.write(`\n${what}: stopping after the current batch (Ctrl-C again to quit now)\n`);
    controller.abort();
  };
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
  return {
    signal: controller.signal,
    dispose() {
      process.off('SIGINT', handler);
      process.off('SIGTERM', handler);
    },
  };
}

/** Waits `ms`, or less when `signal` aborts first (a poll loop then answers Ctrl-C at once). */
export function pauseUnlessAborted(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}
