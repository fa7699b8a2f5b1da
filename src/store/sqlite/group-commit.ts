/**
 * Collects work submitted during one turn of the event loop and commits it in a single transaction, so
 * that N concurrent requests pay for one commit instead of N. Each submitter's promise settles only after
 * the transaction holding its item has committed and been made durable (or failed).
 */
export class GroupCommit<Item, Result> {
  private queue: { item: Item; resolve: (r: Result) => void; reject: (e: unknown) => void }[] = [];
  private scheduled = false;

  /**
   * @param commitBatch runs ONE transaction over all items and returns their results in order; must be
   *   synchronous so nothing else interleaves with the transaction.
   * @param makeDurable awaited after each commit before anyone is answered (the WAL fsync); while it runs
   *   the next batch is already being collected and committed.
   * @param maxBatch upper bound per transaction, so one huge burst does not hold the write lock for long.
   */
  constructor(
    private readonly commitBatch: (items: Item[]) => Result[],
    private readonly makeDurable: () => Promise<void> = () => Promise.resolve(),
    private readonly maxBatch = 256,
    /** Errors that fail every item alike (disk full, lock held elsewhere): no point retrying item by item. */
    private readonly failsEveryItem: (err: unknown) => boolean = () => false,
  ) {}

  submit(item: Item): Promise<Result> {
    return new Promise((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  get pending(): number {
    return this.queue.length;
  }

  private flush(): void {
    this.scheduled = false;
    const batch = this.queue.splice(0, this.maxBatch);
    if (this.queue.length > 0) {
      this.scheduled = true;
      setImmediate(() => this.flush());
    }
    if (batch.length === 0) return;
    const settled: { entry: (typeof batch)[number]; result?: Result; error?: unknown }[] = [];
    try {
      const results = this.commitBatch(batch.map((entry) => entry.item));
      batch.forEach((entry, i) => settled.push({ entry, result: results[i]! }));
    } catch (batchError) {
      if (batch.length === 1 || this.failsEveryItem(batchError)) {
        for (const entry of batch) entry.reject(batchError);
        return;
      }
      // One bad item must not fail its neighbours: fall back to one transaction each.
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
    this.makeDurable().then(() => answer(), answer);
  }
}
