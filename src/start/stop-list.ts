import type { Logger } from 'pino';

/** How one part of a running node stops. */
export type Stopper = () => void | Promise<void>;

export interface StopListOptions {
  logger: Logger;
  /** How long one part may take to stop before the others go on without it (a part may ask for its own). */
  timeoutMs: number;
}

interface Entry {
  name: string;
  stop: Stopper;
  timeoutMs: number;
}

/**
 * The parts of a node in the order they were built, each with how it stops. `stop` runs them in reverse:
 * a part stops before the parts it uses. One that fails, or takes longer than its time, is logged and the
 * rest still stop; `stop` resolves with the names of those, so the caller can say shutdown failed.
 */
export class StopList {
  private readonly entries: Entry[] = [];

  constructor(private readonly options: StopListOptions) {}

  add(name: string, stop: Stopper, timeoutMs = this.options.timeoutMs): void {
    this.entries.push({ name, stop, timeoutMs });
  }

  /** Stops every part added so far, the last added first; each runs once even if `stop` is called again. */
  async stop(): Promise<string[]> {
    const failed: string[] = [];
    for (let entry = this.entries.pop(); entry !== undefined; entry = this.entries.pop()) {
      try {
        await withinTime(entry);
      } catch (err) {
        this.options.logger.error({ err, part: entry.name }, `shutdown: ${entry.name} did not stop cleanly; stopping the rest`);
        failed.push(entry.name);
      }
    }
    return failed;
  }
}

async function withinTime(entry: Entry): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${entry.name} did not stop within ${entry.timeoutMs} ms`)), entry.timeoutMs);
  });
  try {
    await Promise.race([Promise.resolve().then(entry.stop), late]);
  } finally {
    clearTimeout(timer);
  }
}
