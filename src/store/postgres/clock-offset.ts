/**
 * Due times and lease ends on PostgreSQL are database-clock times, so nodes whose clocks disagree still agree
 * on when a delivery falls due and when a lease ends: no node claims early or takes a live lease because its
 * clock runs ahead. The store's roles speak in the node's clock (`now`, `nextAttemptAt`: the store's Clock,
 * the system clock outside tests), so the store translates: database time = node time + offset, where the offset is measured
 * against the database's clock (half a round trip of error) and measured again every `refreshMs`. A new
 * measurement replaces the offset only when it moved by more than `toleranceMs`: jitter of the round trip
 * must not move due times back and forth between two calls.
 */
export class ClockOffset {
  private offsetMs = 0;
  private measuredAt = Number.NEGATIVE_INFINITY;
  private measuring: Promise<void> | null = null;

  constructor(
    /** The database clock in unix ms, read by one round trip. */
    private readonly readDatabaseClock: () => Promise<number>,
    private readonly options: { refreshMs: number; toleranceMs: number } = { refreshMs: 30_000, toleranceMs: 25 },
    private readonly nodeClock: () => number = Date.now,
  ) {}

  /** Measures now (start-up), then at most every `refreshMs` in the background of `toDatabase` calls. */
  async measure(): Promise<void> {
    const before = this.nodeClock();
    const database = await this.readDatabaseClock();
    const after = this.nodeClock();
    const offset = Math.round(database - (before + after) / 2);
    if (Math.abs(offset - this.offsetMs) > this.options.toleranceMs || this.measuredAt === Number.NEGATIVE_INFINITY) this.offsetMs = offset;
    this.measuredAt = after;
  }

  get currentMs(): number {
    return this.offsetMs;
  }

  /**
   * A node-clock time as a database-clock time, in whole milliseconds: the columns are bigint, and callers
   * compute times with jitter (a busy destination's retry time), which PostgreSQL would refuse.
   */
  toDatabase(nodeTime: number): number {
    this.refreshIfStale();
    return Math.round(nodeTime + this.offsetMs);
  }

  /** A database-clock time as a node-clock time. */
  toNode(databaseTime: number): number {
    return databaseTime - this.offsetMs;
  }

  private refreshIfStale(): void {
    if (this.measuring || this.nodeClock() - this.measuredAt < this.options.refreshMs) return;
    this.measuring = this.measure()
      .catch(() => {}) // the database is unreachable: the last offset holds, the next call tries again
      .finally(() => {
        this.measuring = null;
      });
  }
}
