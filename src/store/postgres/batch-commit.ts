interface Entry<Item, Result> {
  item: Item;
  resolve: (r: Result) => void;
  reject: (e: unknown) => void;
}

export interface BatchCommitOptions {
  /** Upper bound per transaction (default 256). */
  maxBatch?: number;
  /**
   * Transactions in flight at once (default 1). One at a time is group commit proper: while a batch commits,
   * the next gathers, and the batch size follows the load.
   */
  maxInFlight?: number;
  /** Errors that fail every item alike (the database is gone): no point trying the items one by one. */
  failsEveryItem?: (err: unknown) => boolean;
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
}

/**
 * Group commit for an asynchronous database: items submitted while a batch commits form the next one, and
 * every submitter's promise settles only after the transaction holding its item has committed (or failed).
 * One item that makes the batch fail (bad data) does not fail its neighbours: they are retried one by one.
 */
export class BatchCommit<Item, Result> {
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

  /** @param commitBatch runs ONE transaction over all items and returns their results in order. */
  constructor(private readonly commitBatch: (items: Item[]) => Promise<Result[]>, options: BatchCommitOptions = {}) {
    this.maxBatch = options.maxBatch ?? 256;
    this.maxInFlight = options.maxInFlight ?? 1;
    this.failsEveryItem = options.failsEveryItem ?? (() => false);
    this.isRetryable = options.isRetryable ?? (() => false);
    this.retries = options.retries ?? 3;
    this.gatherMs = options.gatherMs ?? 0;
    this.gatherAfter = options.gatherAfter ?? 4;
  }

  submit(item: Item): Promise<Result> {
    return new Promise((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      this.schedule();
    });
  }

  /** Items submitted and not yet settled. */
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
    const batch = this.queue.splice(0, this.maxBatch);
    if (batch.length === 0) return;
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
      const results = await this.commitWithRetries(batch.map((entry) => entry.item));
      batch.forEach((entry, i) => entry.resolve(results[i]!));
    } catch (err) {
      if (batch.length === 1 || this.failsEveryItem(err)) {
        for (const entry of batch) entry.reject(err);
        return;
      }
      for (const entry of batch) {
        try {
          entry.resolve((await this.commitWithRetries([entry.item]))[0]!);
        } catch (error) {
          entry.reject(error);
        }
      }
    }
  }

  private async commitWithRetries(items: Item[]): Promise<Result[]> {
    for (let attempt = 0; ; attempt += 1) {
      try {
        return await this.commitBatch(items);
      } catch (err) {
        if (attempt >= this.retries || !this.isRetryable(err)) throw err;
      }
    }
  }
}
