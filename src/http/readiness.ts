import type { Logger } from 'pino';

/** Whether a node takes webhooks now, and why: `/readyz` says only the first, the admin API both. */
export interface ReadinessReport {
  ready: boolean;
  checks: Record<string, unknown>;
}

export interface CommitHealthOptions {
  /** One write that commits as an event's would (Store.checkWritable). */
  probe: () => Promise<void>;
  /** How often the probe runs; skipped while commits have succeeded within this long. */
  intervalMs: number;
  /** A probe without an answer this long counts as failed (the database may be unreachable, not refusing). */
  deadlineMs: number;
  logger: Logger;
}

/**
 * What this node knows of whether its store can commit: the outcome of the latest webhook commits and of a
 * background probe with a deadline. Readiness is read from it at once, never by waiting on the database,
 * so a health check gets its answer even while the database cannot be reached. A failure makes it
 * unhealthy until a commit or a probe succeeds; the probe runs while no commits succeed, so an idle node
 * (or one a load balancer stopped sending to) finds out by itself.
 */
export class CommitHealth {
  private failure: string | null = null;
  private lastSuccessAt = -Infinity;
  private timer: NodeJS.Timeout | null = null;
  private probing: Promise<void> | null = null;
  private stopped = false;

  constructor(private readonly options: CommitHealthOptions) {}

  /** `ok`, or why the last commit or probe failed. */
  get status(): string {
    return this.failure ?? 'ok';
  }

  succeeded(): void {
    this.lastSuccessAt = performance.now();
    if (this.failure === null) return;
    this.options.logger.info({ after: this.failure }, 'store: commits succeed again; ready');
    this.failure = null;
  }

  failed(reason: string): void {
    if (this.failure === null) this.options.logger.warn({ reason }, 'store: commits fail; not ready until one succeeds');
    this.failure = reason;
  }

  /** Probes now and then every `intervalMs`. */
  start(): void {
    this.stopped = false;
    void this.probe();
    this.schedule();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.probing;
  }

  /** One probe, unless one is under way (then that one's outcome). */
  probe(): Promise<void> {
    return (this.probing ??= this.runProbe().finally(() => {
      this.probing = null;
    }));
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      const recentSuccess = this.failure === null && performance.now() - this.lastSuccessAt < this.options.intervalMs;
      void (recentSuccess ? Promise.resolve() : this.probe()).finally(() => this.schedule());
    }, this.options.intervalMs);
    this.timer.unref();
  }

  private async runProbe(): Promise<void> {
    let deadline: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_resolve, reject) => {
      deadline = setTimeout(() => reject(new Error(`no answer from the store within ${this.options.deadlineMs} ms`)), this.options.deadlineMs);
      deadline.unref();
    });
    try {
      await Promise.race([this.options.probe(), late]);
      this.succeeded();
    } catch (err) {
      this.failed((err as Error).message);
    } finally {
      clearTimeout(deadline);
    }
  }
}
