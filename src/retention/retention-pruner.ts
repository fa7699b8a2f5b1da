import type { Logger } from 'pino';
import type { RetentionStore } from '../store/retention-store.js';
import type { SeenKeysStore } from '../store/seen-keys-store.js';
import type { EventStore } from '../store/event-store.js';
import type { ClusterStore } from '../store/cluster-store.js';
import { PassTimer } from '../start/pass-timer.js';

export interface RetentionSettings {
  maxAgeDays: number;
  maxEvents: number;
  /** How long the ledger of seen keys remembers a removed event's key (default 90 days). */
  seenKeysDays?: number;
  intervalMs: number;
  batchSize: number;
}

export interface PruneReport {
  byAge: number;
  byCount: number;
  /** Keys of removed events the ledger of seen keys forgot. */
  seenKeys: number;
  /** Free pages still in the database file after reclaiming (0 once all space is given back). */
  freePagesLeft: number;
  durationMs: number;
  /** The pass stopped early (shutdown, a store error, or the lease lost); the next pass carries on. */
  interrupted: boolean;
  /** Another node held the retention lease: this node did nothing this time. */
  skipped: boolean;
}

export interface RetentionPrunerOptions {
  store: RetentionStore & EventStore & ClusterStore & SeenKeysStore;
  settings: RetentionSettings;
  logger: Logger;
  now?: () => number;
  /** Called after every pass (metrics). */
  onPass?: (report: PruneReport) => void;
  /** Delay before the first pass after start (default: the interval, at most 5 s). */
  firstPassDelayMs?: number;
  /** Pause between batches: ingest commits run in it, so pruning never holds them up for more than one batch. */
  pauseBetweenBatchesMs?: number;
  /**
   * This node's id: a pass runs only while it holds the store's `retention` lease, so across nodes sharing
   * a database one pass runs at a time. Unset: no lease (a store no other process writes).
   */
  leaseHolder?: string;
  /** How long the lease lasts unless renewed (it is renewed after every batch); default 60 s. */
  leaseMs?: number;
}

/** The lease that makes retention run on one node at a time. */
export const RETENTION_LEASE = 'retention';

const DAY_MS = 24 * 60 * 60 * 1000;
const DEFAULT_SEEN_KEYS_DAYS = 90;
/** Pages moved per incremental_vacuum step (4 MiB with the default 4 KiB page): short, like a prune batch. */
const VACUUM_PAGES_PER_STEP = 1024;

/**
 * Deletes old events in small batches on a timer: first (once, after the upgrade that added the ledger of
 * seen keys) it puts the keys of the events stored before it in the ledger, then it deletes those older than `maxAgeDays`, then the oldest
 * beyond `maxEvents`, then the keys of removed events older than `seenKeysDays` from the ledger of seen keys.
 * Events with a pending delivery are kept (the store guarantees it). Each batch is its
 * own short transaction, and the worker pauses between batches so webhooks keep being acknowledged.
 * Freed pages are then given back to the file system with incremental vacuum. Nodes sharing a database
 * take turns: a pass runs only under the store's `retention` lease, renewed after every batch.
 */
export class RetentionPruner {
  private readonly now: () => number;
  private readonly timer: PassTimer<PruneReport>;

  constructor(private readonly options: RetentionPrunerOptions) {
    this.now = options.now ?? Date.now;
    this.timer = new PassTimer(() => this.pass(), () => this.options.settings.intervalMs);
  }

  private get stopping(): boolean {
    return this.timer.stopping;
  }

  start(): void {
    this.timer.start(this.options.firstPassDelayMs ?? Math.min(this.options.settings.intervalMs, 5_000));
  }

  /** Runs one pass now (or joins the one running). */
  runOnce(): Promise<PruneReport> {
    return this.timer.runOnce();
  }

  /** Stops the timer and waits for a running pass to end at its next batch boundary. */
  stop(): Promise<void> {
    return this.timer.stop();
  }

  private pause(): Promise<void> {
    return new Promise((resolve) => setTimeout(resolve, this.options.pauseBetweenBatchesMs ?? 1));
  }

  /** Takes or renews the lease; true without one (no holder). */
  private holdLease(): Promise<boolean> {
    const holder = this.options.leaseHolder;
    if (holder === undefined) return Promise.resolve(true);
    return this.options.store.acquireLease(RETENTION_LEASE, holder, this.options.leaseMs ?? 60_000);
  }

  /** Runs `step` until it reports nothing left to do, pausing between calls; false if stopped early or the lease was lost. */
  private async repeat(step: () => Promise<boolean>): Promise<boolean> {
    while (!this.stopping) {
      if (!(await step())) return true;
      await this.pause();
      if (!(await this.holdLease())) return false;
    }
    return false;
  }

  private async pass(): Promise<PruneReport> {
    const { store, settings, logger } = this.options;
    const started = this.now();
    const report: PruneReport = { byAge: 0, byCount: 0, seenKeys: 0, freePagesLeft: 0, durationMs: 0, interrupted: false, skipped: false };
    let leased = false;
    try {
      leased = await this.holdLease();
      if (!leased) {
        report.skipped = true;
        return report;
      }
      // Keys of events stored before the ledger existed go in first (a no-op once they are all in).
      const backfilled = await this.repeat(async () => (await store.backfillSeenKeys(settings.batchSize)) > 0);
      const cutoff = started - settings.maxAgeDays * DAY_MS;
      // A history partitioned by time (PostgreSQL) loses whole partitions first; the batches below then
      // find only what is left (rows from before the partitions, and less than a partition over maxEvents).
      let partitioned = backfilled && !this.stopping;
      let eventsAtMost: number | null = null;
      if (partitioned && store.maintainPartitions) {
        // Renewed between the partition steps too: a detach may wait for long reads, and the lease must not lapse meanwhile.
        const partitions = await store.maintainPartitions({ now: started, storedBefore: cutoff, maxEvents: settings.maxEvents, renew: () => this.holdLease() });
        report.byAge += partitions.byAge;
        report.byCount += partitions.byCount;
        eventsAtMost = partitions.eventsAtMost;
        if (partitions.dropped + partitions.created + partitions.moved > 0) {
          logger.info({ partitionsCreated: partitions.created, partitionsDropped: partitions.dropped, movedPending: partitions.moved }, 'retention: partitions');
        }
        partitioned = !partitions.interrupted && (await this.holdLease());
      }
      const ageDone = partitioned && await this.repeat(async () => {
        // Partitioned: rows are not deleted one by one ahead of their partition's drop (that would write the
        // WAL and bloat the drop saves); only those outside a partition's range are.
        const deleted = await store.pruneEventsOlderThan(cutoff, settings.batchSize, { leaveToPartitions: store.maintainPartitions !== undefined });
        report.byAge += deleted;
        return deleted > 0;
      });
      // An exact count reads every event: skipped when the partitions' bound is already within the limit.
      const underLimit = eventsAtMost !== null && eventsAtMost <= settings.maxEvents;
      let excess = ageDone && !underLimit ? (await store.countEvents({})) - settings.maxEvents : 0;
      const countDone = ageDone && (await this.repeat(async () => {
        if (excess <= 0) return false;
        const deleted = await store.pruneOldestEvents(Math.min(settings.batchSize, excess));
        report.byCount += deleted;
        excess -= deleted;
        // Nothing deleted although over the limit: the rest all have pending deliveries.
        return deleted > 0;
      }));
      const keysCutoff = started - (settings.seenKeysDays ?? DEFAULT_SEEN_KEYS_DAYS) * DAY_MS;
      const keysDone = countDone && (await this.repeat(async () => {
        const forgotten = await store.pruneSeenKeys(keysCutoff, settings.batchSize);
        report.seenKeys += forgotten;
        return forgotten > 0;
      }));
      let freePages = Number.POSITIVE_INFINITY;
      const vacuumDone = keysDone && (await this.repeat(async () => {
        const left = await store.reclaimFreePages(VACUUM_PAGES_PER_STEP);
        // No progress means nothing more can be given back (e.g. a database without auto_vacuum).
        const progressed = left > 0 && left < freePages;
        freePages = left;
        return progressed;
      }));
      report.freePagesLeft = Number.isFinite(freePages) ? freePages : 0;
      report.interrupted = !vacuumDone;
    } catch (err) {
      report.interrupted = true;
      logger.warn({ err }, 'retention pass stopped by a store error; the next pass carries on');
    } finally {
      if (leased && this.options.leaseHolder !== undefined) await store.releaseLease(RETENTION_LEASE, this.options.leaseHolder).catch(() => undefined);
    }
    report.durationMs = this.now() - started;
    if (report.byAge + report.byCount > 0 || report.interrupted) {
      logger.info({ prunedByAge: report.byAge, prunedByCount: report.byCount, forgottenSeenKeys: report.seenKeys, freePagesLeft: report.freePagesLeft, durationMs: report.durationMs, interrupted: report.interrupted }, 'retention pass');
    }
    this.options.onPass?.(report);
    return report;
  }
}
