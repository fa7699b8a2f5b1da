import { afterFailedBatch, DEFAULT_MAX_BATCH, type GroupCommitOptions } from '../group-commit.js';

interface Entry<Item, Result> {
  item: Item;
  resolve: (r: Result) => void;
  reject: (e: unknown) => void;
  /** performance.now() past which the submitter is answered with the deadline's error. */
  deadline: number;
  settled: boolean;
}

export interface PostgresGroupCommitOptions extends GroupCommitOptions {
  /**
   * Transactions in flight at once (default 1). One at a time is group commit proper: while a batch commits,
   * the next gathers, and the batch size follows the load.
   */
  maxInFlight?: number;
  /** Errors after which the same batch simply runs again (a deadlock): how often, at most (default 3). */
  isRetryable?: (err: unknown) => boolean;
  retries?: number;
  /**
   * After a batch of at least `gatherAfter` items (default 4: arrivals are steady and concurrent), how long
   * the next batch gathers items from its first one before it commits: fewer, larger commits cost the
   * database less per item, and a lone submitter that waits for each answer is never held (default 0: off).
   */
  gatherMs?: number;
  gatherAfter?: number;
  /**
   * How long a submitter waits at most, from `submit` to its answer, queueing and retries included (default:
   * no limit). Past it the promise rejects with `deadlineError()`; an item still queued is then never
   * committed, one whose transaction is under way may still commit (its submitter was told to retry).
   */
  deadlineMs?: number;
  deadlineError?: (waitedMs: number) => unknown;
}

/**
 * Group commit (../group-commit.ts) on PostgreSQL, an asynchronous database: items submitted while a batch
 * commits form the next one, and every submitter's promise settles only after the transaction holding its
 * item has committed (or failed).
 */
export class PostgresGroupCommit<Item, Result> {
  private queue: Entry<Item, Result>[] = [];
  private inFlight = 0;
  private scheduled = false;
  private readonly idleWaiters: (() => void)[] = [];
  private readonly maxBatch: number;
  private readonly maxInFlight: number;
  private readonly failsEveryItem: (err: unknown) => boolean;
  private readonly isRetryable: (err: unknown) => boolean;
  private readonly retries: number;
  private readonly gatherMs: number;
  private readonly gatherAfter: number;
  private lastBatchSize = 0;
  private readonly deadlineMs: number;
  private readonly deadlineError: (waitedMs: number) => unknown;
  /** Unsettled entries in submission order: the first one's deadline comes first. */
  private readonly waiting = new Set<Entry<Item, Result>>();
  private deadlineTimer: NodeJS.Timeout | null = null;

  /**
   * @param commitBatch runs ONE transaction over all items and returns their results in order; `timeLeftMs`
   * is how long the most waited-for of their submitters can still wait (Infinity without a deadline).
   */
  constructor(private readonly commitBatch: (items: Item[], timeLeftMs: number) => Promise<Result[]>, options: PostgresGroupCommitOptions = {}) {
    this.maxBatch = options.maxBatch ?? DEFAULT_MAX_BATCH;
    this.maxInFlight = options.maxInFlight ?? 1;
    this.failsEveryItem = options.failsEveryItem ?? (() => false);
    this.isRetryable = options.isRetryable ?? (() => false);
    this.retries = options.retries ?? 3;
    this.gatherMs = options.gatherMs ?? 0;
    this.gatherAfter = options.gatherAfter ?? 4;
    this.deadlineMs = options.deadlineMs ?? Infinity;
    this.deadlineError = options.deadlineError ?? ((waitedMs) => new Error(`no commit within ${waitedMs} ms`));
  }

  submit(item: Item): Promise<Result> {
    return new Promise((resolve, reject) => {
      const entry: Entry<Item, Result> = { item, resolve, reject, deadline: performance.now() + this.deadlineMs, settled: false };
      this.queue.push(entry);
      if (this.deadlineMs !== Infinity) {
        this.waiting.add(entry);
        this.armDeadline();
      }
      this.schedule();
    });
  }

  private settle(entry: Entry<Item, Result>, outcome: { result: Result } | { error: unknown }): void {
    if (entry.settled) return;
    entry.settled = true;
    this.waiting.delete(entry);
    if ('result' in outcome) entry.resolve(outcome.result);
    else entry.reject(outcome.error);
  }

  /** One timer, for the oldest unsettled entry: per-entry timers would cost every acknowledgement two timer operations. */
  private armDeadline(): void {
    if (this.deadlineTimer) return;
    const first = this.waiting.values().next().value;
    if (!first) return;
    this.deadlineTimer = setTimeout(() => {
      this.deadlineTimer = null;
      const now = performance.now();
      for (const entry of this.waiting) {
        if (entry.deadline > now) break;
        this.settle(entry, { error: this.deadlineError(this.deadlineMs) });
      }
      this.queue = this.queue.filter((entry) => !entry.settled);
      if (this.pending === 0) for (const wake of this.idleWaiters.splice(0)) wake();
      this.armDeadline();
    }, Math.max(1, first.deadline - performance.now()));
    this.deadlineTimer.unref();
  }

  /** Items queued or committing. */
  get pending(): number {
    return this.queue.length + this.inFlight;
  }

  /** Resolves once nothing is queued or committing. */
  idle(): Promise<void> {
    if (this.pending === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private schedule(): void {
    if (this.scheduled || this.inFlight >= this.maxInFlight || this.queue.length === 0) return;
    this.scheduled = true;
    const go = (): void => {
      this.scheduled = false;
      this.flush();
    };
    // At least one turn of the event loop: everything submitted in it shares the transaction.
    if (this.gatherMs > 0 && this.lastBatchSize >= this.gatherAfter) setTimeout(go, this.gatherMs);
    else setImmediate(go);
  }

  private flush(): void {
    const batch = this.queue.splice(0, this.maxBatch).filter((entry) => !entry.settled);
    if (batch.length === 0) {
      this.schedule(); // whatever is queued behind the items given up on
      return;
    }
    this.lastBatchSize = batch.length;
    this.inFlight += 1;
    this.run(batch).finally(() => {
      this.inFlight -= 1;
      this.schedule();
      if (this.pending === 0) for (const wake of this.idleWaiters.splice(0)) wake();
    });
    this.schedule(); // a burst larger than one batch, when more transactions may run at once
  }

  private async run(batch: Entry<Item, Result>[]): Promise<void> {
    try {
      const results = await this.commitWithRetries(batch);
      batch.forEach((entry, i) => this.settle(entry, { result: results[i]! }));
    } catch (err) {
      if (afterFailedBatch(err, batch.length, this.failsEveryItem) === 'fail-all') {
        for (const entry of batch) this.settle(entry, { error: err });
        return;
      }
      for (const entry of batch) {
        // One whose submitter has had its answer (the deadline passed) is not committed now.
        if (entry.settled) continue;
        try {
          this.settle(entry, { result: (await this.commitWithRetries([entry]))[0]! });
        } catch (error) {
          this.settle(entry, { error });
        }
      }
    }
  }

  private async commitWithRetries(entries: Entry<Item, Result>[]): Promise<Result[]> {
    const items = entries.map((entry) => entry.item);
    const firstDeadline = entries[0]!.deadline; // entries are in submission order
    for (let attempt = 0; ; attempt += 1) {
      try {
        return await this.commitBatch(items, Math.max(1, firstDeadline - performance.now()));
      } catch (err) {
        // Once every submitter has had its answer, running the batch again would serve no one.
        if (attempt >= this.retries || !this.isRetryable(err) || entries.every((entry) => entry.settled)) throw err;
      }
    }
  }
}
