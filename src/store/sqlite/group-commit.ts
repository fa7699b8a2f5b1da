import { afterFailedBatch, DEFAULT_MAX_BATCH, type GroupCommitOptions } from '../group-commit.js';

/** Waiting out a write lock that another connection holds (see `BusyRetry`). */
export interface BusyRetry {
  /** The commit failed only because another connection held the write lock; nothing was written. */
  isBusy: (err: unknown) => boolean;
  /** How long a batch keeps trying, from when its oldest item was submitted, before it fails. */
  forMs: number;
  /** Pause between two tries; the event loop serves other work meanwhile. */
  pauseMs: number;
}

interface Entry<Item, Result> {
  item: Item;
  submittedAt: number;
  resolve: (r: Result) => void;
  reject: (e: unknown) => void;
}

export interface SqliteGroupCommitOptions extends GroupCommitOptions {
  /**
   * Awaited after each commit before anyone is answered (the WAL fsync). While it runs, new items only queue
   * up: they could not be answered before the next fsync anyway. When it ends they are committed at once, as
   * one transaction, and the next fsync starts.
   */
  makeDurable?: () => Promise<void>;
  /**
   * A lock held elsewhere for a moment (the checkpoint thread's WAL restart, a CLI import) makes the batch
   * wait and try again instead of failing every request in it at once.
   */
  busyRetry?: BusyRetry;
  /**
   * Durable groups only: the shortest time from one commit to the next (default 0, no pacing). An item
   * submitted after a quiet spell is committed at once; under steady load items wait up to this long and
   * share a commit. Each commit rewrites the table and index pages it touches and costs an fsync, so at a
   * moderate rate, where commits would otherwise carry two or three items each, fewer and larger commits
   * write less WAL and spend less CPU per item, at the price of up to this much latency.
   */
  minCommitIntervalMs?: number;
  /**
   * Whether to pace right now (default: always). Pacing caps a sender that waits for each answer before it
   * sends again at one item per interval, so the store paces only while its event loop is busy.
   */
  paceWhen?: () => boolean;
}

/**
 * Group commit (../group-commit.ts) on SQLite: collects work submitted during one turn of the event loop and
 * commits it in a single synchronous transaction, so that N concurrent requests pay for one commit instead
 * of N. Each submitter's promise settles only after the transaction holding its item has committed and been
 * made durable (or failed).
 */
export class SqliteGroupCommit<Item, Result> {
  private queue: Entry<Item, Result>[] = [];
  private scheduled = false;
  /** A committed batch is waiting for `makeDurable`; items submitted meanwhile wait to form the next batch. */
  private awaitingDurability = false;

  private readonly makeDurable: (() => Promise<void>) | undefined;
  private readonly maxBatch: number;
  private readonly failsEveryItem: (err: unknown) => boolean;
  private readonly busyRetry: BusyRetry | undefined;
  private readonly minCommitIntervalMs: number;
  private readonly paceWhen: () => boolean;
  /** When the last batch was committed (performance.now()), for the commit pacing of durable groups. */
  private lastCommitAt = Number.NEGATIVE_INFINITY;

  /**
   * @param commitBatch runs ONE transaction over all items and returns their results in order; must be
   *   synchronous so nothing else interleaves with the transaction.
   */
  constructor(
    private readonly commitBatch: (items: Item[]) => Result[],
    options: SqliteGroupCommitOptions = {},
  ) {
    this.makeDurable = options.makeDurable;
    this.maxBatch = options.maxBatch ?? DEFAULT_MAX_BATCH;
    this.failsEveryItem = options.failsEveryItem ?? (() => false);
    this.busyRetry = options.busyRetry;
    this.minCommitIntervalMs = options.makeDurable ? (options.minCommitIntervalMs ?? 0) : 0;
    this.paceWhen = options.paceWhen ?? (() => true);
  }

  submit(item: Item): Promise<Result> {
    return new Promise((resolve, reject) => {
      this.queue.push({ item, submittedAt: performance.now(), resolve, reject });
      this.schedule(0);
    });
  }

  get pending(): number {
    return this.queue.length;
  }

  /**
   * Commits the queued items inside a transaction the caller runs anyway, instead of in one of their own:
   * `transaction(items)` writes them and its own rows, and returns the items' results with its own value.
   * One commit instead of two (the worker records finished attempts in the transaction that claims the
   * next rows). Only for groups without `makeDurable`: the items are answered once `transaction` returns.
   * If it throws, nothing was written: the items go back to the queue for a commit of their own.
   */
  commitAlong<T>(transaction: (items: Item[]) => { results: Result[]; value: T }): T {
    if (this.makeDurable) throw new Error('commitAlong is for groups that need no durability wait');
    const batch = this.queue.splice(0, this.maxBatch);
    let outcome: { results: Result[]; value: T };
    try {
      outcome = transaction(batch.map((entry) => entry.item));
    } catch (err) {
      this.queue.unshift(...batch);
      this.scheduleRest();
      throw err;
    }
    batch.forEach((entry, i) => entry.resolve(outcome.results[i]!));
    this.scheduleRest();
    return outcome.value;
  }

  private schedule(delayMs: number): void {
    if (this.scheduled || this.awaitingDurability) return;
    this.scheduled = true;
    const wait = Math.max(delayMs, this.paceWaitMs());
    if (wait > 0) setTimeout(() => this.flush(), wait);
    else setImmediate(() => this.flush());
  }

  /** How long the next commit must still wait to keep `minCommitIntervalMs` after the last one. */
  private paceWaitMs(): number {
    return this.minCommitIntervalMs > 0 && this.paceWhen() ? this.lastCommitAt + this.minCommitIntervalMs - performance.now() : 0;
  }

  private flush(): void {
    this.scheduled = false;
    const batch = this.queue.splice(0, this.maxBatch);
    if (batch.length === 0) return;
    this.lastCommitAt = performance.now();
    const settled: { entry: Entry<Item, Result>; result?: Result; error?: unknown }[] = [];
    try {
      const results = this.commitBatch(batch.map((entry) => entry.item));
      batch.forEach((entry, i) => settled.push({ entry, result: results[i]! }));
    } catch (batchError) {
      if (this.shouldWaitOut(batchError, batch)) {
        // The transaction rolled back whole: the same items go first again after a pause.
        this.queue.unshift(...batch);
        this.schedule(this.busyRetry!.pauseMs);
        return;
      }
      if (afterFailedBatch(batchError, batch.length, this.failsEveryItem) === 'fail-all') {
        for (const entry of batch) entry.reject(batchError);
        this.scheduleRest();
        return;
      }
      for (const entry of batch) {
        try {
          settled.push({ entry, result: this.commitBatch([entry.item])[0]! });
        } catch (error) {
          settled.push({ entry, error });
        }
      }
    }
    const answer = (durableError?: unknown): void => {
      for (const { entry, result, error } of settled) {
        if (error !== undefined || durableError !== undefined) entry.reject(error ?? durableError);
        else entry.resolve(result!);
      }
    };
    if (!this.makeDurable) {
      answer();
      this.scheduleRest();
      return;
    }
    this.awaitingDurability = true;
    const durable = (err?: unknown): void => {
      this.awaitingDurability = false;
      answer(err); // settles promises only: the answers are written after this callback returns
      // Commit what gathered meanwhile now, before those answers are written, so the next fsync starts at once
      // and the disk never waits for the event loop; with pacing, once the interval since the last commit is up.
      if (this.queue.length === 0) return;
      if (this.paceWaitMs() > 0) this.schedule(0);
      else this.flush();
    };
    this.makeDurable().then(() => durable(), durable);
  }

  /** More items are waiting (a burst larger than one batch, or items behind a failed batch): the next turn takes them. */
  private scheduleRest(): void {
    if (this.queue.length > 0) this.schedule(0);
  }

  private shouldWaitOut(err: unknown, batch: Entry<Item, Result>[]): boolean {
    const retry = this.busyRetry;
    return retry !== undefined && retry.isBusy(err) && performance.now() - batch[0]!.submittedAt < retry.forMs;
  }
}
