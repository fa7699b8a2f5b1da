import type { Logger } from 'pino';
import type { NewDrift, SchemaStore, StoredDrift } from '../store/schema-store.js';
import type { ClusterStore } from '../store/cluster-store.js';
import type { NewEventStore, StreamPosition } from '../store/new-event-store.js';
import { SchemaAggregate, type LearnSettings } from './schema-aggregate.js';
import { PassTimer } from '../start/pass-timer.js';
import { EventLoopLoad } from '../store/sqlite/event-loop-load.js';

/** While behind: the pause after `busyMs` of learning that holds it to `share` of the event loop (at least 1 ms). */
export function catchUpPauseMs(busyMs: number, share: number): number {
  return Math.max(1, Math.ceil((busyMs * (1 - share)) / share));
}

/** The share of the event loop learning may take while behind: the smaller one while the loop is busy with other work. */
export function catchUpShare(settings: Pick<LearnerSettings, 'maxBusyShare' | 'maxBusyShareUnderLoad'>, loopBusy: boolean): number {
  return loopBusy ? settings.maxBusyShareUnderLoad : settings.maxBusyShare;
}

export interface LearnerSettings extends LearnSettings {
  /** How often the learner reads new events and flushes the summary (one transaction per flush). */
  intervalMs: number;
  /** Events read per query. */
  batchSize: number;
  /** Events learned per pass at most: a backlog (a backfill) is worked off over several passes. */
  maxEventsPerPass: number;
  /** Time a pass spends learning at most before it pauses (config `schema.maxPassMs`). */
  maxPassMs: number;
  /** The largest share of the event loop learning takes while it catches up (config `schema.maxBusyShare`). */
  maxBusyShare: number;
  /** The same while the event loop is busy with other work, webhooks above all (config `schema.maxBusyShareUnderLoad`). */
  maxBusyShareUnderLoad: number;
}

export interface LearnReport {
  /** Another node holds the `schema` lease: this node learned nothing. */
  skipped: boolean;
  learned: number;
  drifts: StoredDrift[];
  /** More events were waiting when the pass ended. */
  behind: boolean;
}

export interface SchemaLearnerOptions {
  store: NewEventStore & ClusterStore & SchemaStore;
  settings: LearnerSettings;
  logger: Logger;
  /** This node's id: the learner runs while it holds the store's `schema` lease. */
  leaseHolder: string;
  leaseMs?: number;
  now?: () => number;
  /** Drifts this node recorded (each once across the cluster): alerts and metrics. */
  onDrifts?: (drifts: StoredDrift[]) => void;
}

/** The lease that makes one node at a time learn the observed schema. */
export const SCHEMA_LEASE = 'schema';

interface Learning {
  generation: number;
  position: StreamPosition;
  aggregate: SchemaAggregate;
}

/**
 * Learns the observed schema off the acknowledging path: on a timer, the node holding the `schema` lease
 * reads the events committed since its position (commit order, as event streams do), folds their bodies
 * into the summaries in memory, and saves the changed summaries, the new drifts and the position in one
 * transaction. Ingest writes nothing for it. A node that takes the lease over, or whose save finds that a
 * backfill started learning over, loads the stored state first.
 */
export class SchemaLearner {
  private readonly now: () => number;
  private learning: Learning | null = null;
  private readonly timer: PassTimer<LearnReport>;
  private loopLoad: EventLoopLoad | null = null;

  constructor(private readonly options: SchemaLearnerOptions) {
    this.now = options.now ?? Date.now;
    this.timer = new PassTimer(
      () => this.pass(),
      (report) => (report?.behind ? this.catchUpPause() : this.options.settings.intervalMs),
      (err) => this.options.logger.warn({ err }, 'schema learning pass failed; the next pass carries on from the stored position'),
    );
  }

  private get stopping(): boolean {
    return this.timer.stopping;
  }

  start(): void {
    this.loopLoad ??= new EventLoopLoad();
    this.timer.start(Math.min(this.options.settings.intervalMs, 1_000));
  }

  /** Runs one pass now (or joins the one running). */
  runOnce(): Promise<LearnReport> {
    return this.timer.runOnce();
  }

  async stop(): Promise<void> {
    this.loopLoad?.stop();
    await this.timer.stop();
    if (this.learning) await this.options.store.releaseLease(SCHEMA_LEASE, this.options.leaseHolder).catch(() => undefined);
  }

  /** Time the last pass kept the event loop busy (parsing and observing bodies), in ms. */
  private busyMs = 0;

  /**
   * While behind, the pause before the next pass. When the event loop is busy with other work (a peak of
   * webhooks), learning takes the smaller share: the backlog waits in the store and is worked off at the
   * larger share once the peak passes, so drifts are recorded later, never lost.
   */
  private catchUpPause(): number {
    return catchUpPauseMs(this.busyMs, catchUpShare(this.options.settings, this.loopLoad?.busy() ?? false));
  }

  private async load(): Promise<Learning> {
    const { store, settings } = this.options;
    const stored = await store.loadSchemaLearning();
    const position = stored?.position ?? (await store.streamPosition(stored?.fromStart ? { receivedFrom: 0 } : { now: true }));
    return { generation: stored?.generation ?? 0, position, aggregate: new SchemaAggregate(settings, stored?.schemas ?? []) };
  }

  private async pass(): Promise<LearnReport> {
    const { store, settings, leaseHolder } = this.options;
    const report: LearnReport = { skipped: false, learned: 0, drifts: [], behind: false };
    if (!(await store.acquireLease(SCHEMA_LEASE, leaseHolder, this.options.leaseMs ?? Math.max(60_000, settings.intervalMs * 3)))) {
      // Another node learns; what this node had in memory is stale from now on.
      this.learning = null;
      report.skipped = true;
      return report;
    }
    this.learning ??= await this.load();
    const learning = this.learning;
    const drifts: NewDrift[] = [];
    this.busyMs = 0;
    try {
      let read = 0;
      while (!this.stopping) {
        const batch = await store.readEventsToLearn(learning.position, Math.min(settings.batchSize, settings.maxEventsPerPass - read));
        const startedAt = performance.now();
        for (const event of batch.events) {
          if (event.edited) continue;
          let body: unknown;
          try {
            body = JSON.parse(event.body.toString('utf8'));
          } catch {
            continue;
          }
          drifts.push(...learning.aggregate.observe(event, body));
          report.learned += 1;
        }
        this.busyMs += performance.now() - startedAt;
        read += batch.events.length;
        learning.position = batch.position;
        if (batch.events.length < settings.batchSize) break;
        // Short passes: webhooks meet learning in slices of maxPassMs, each followed by its pause.
        report.behind = read >= settings.maxEventsPerPass || this.busyMs >= settings.maxPassMs;
        if (report.behind) break;
        // Webhooks waiting on this event loop are answered between two batches.
        await new Promise((resolve) => setImmediate(resolve));
      }
      // Saved even when nothing was read: the save is how a backfill started on another node is noticed.
      const saved = await store.saveSchemaLearning({ generation: learning.generation, position: learning.position, schemas: learning.aggregate.takeChanged(), drifts, now: this.now() });
      if (!saved.saved) {
        // A backfill started learning over: begin again from the stored state.
        this.learning = null;
        report.behind = true;
        return report;
      }
      report.drifts = saved.drifts;
      if (saved.drifts.length > 0) this.options.onDrifts?.(saved.drifts);
      return report;
    } catch (err) {
      // What is in memory went beyond what is stored: load again next time.
      this.learning = null;
      throw err;
    }
  }
}
