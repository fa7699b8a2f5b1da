import type { EventSelection, EventStore } from '../../store/event-store.js';
import type { JobProgress } from '../../store/job-store.js';
import type { NewDelivery } from '../../store/outbox-store.js';
import { HookrelayError } from '../../errors.js';
import type { BulkReplayPlanner } from '../bulk-replay-plan.js';
import { JOB_BATCH_SIZE, startingAfterId, yieldToEventLoop } from './batches.js';
import type { BulkStore } from '../../store/bulk-store.js';

/**
 * What runs a bulk operation batch by batch: the admin API's jobs (progress in the jobs table) and the CLI's
 * local mode (progress on the terminal, Ctrl-C as the stop signal) share the loops below.
 */
export interface BatchLoop {
  store: EventStore & BulkStore;
  /** True once the job must stop (cancelled on any node, or the server is stopping): checked between batches. */
  shouldStop: () => boolean | Promise<boolean>;
  onProgress: (progress: JobProgress) => Promise<void>;
}

export interface ReplayJobInput {
  selection: EventSelection;
  /** The newest event when the job started: events arriving later are not replayed. */
  throughId: number;
  /** Routing mode, rule, dry run; reads today's rules per event, so a hot reload applies to the next batch. */
  planner: BulkReplayPlanner;
  total: number;
  /** Resume after this event id (an interrupted run's `lastId`). */
  afterId?: number;
}

/** What a batch loop did, and where it ended: `lastId` is the last id of the last batch written (resume after it). */
export interface BatchLoopResult {
  progress: JobProgress;
  stopped: boolean;
  lastId?: number;
}

/**
 * Replays matching events oldest first, a batch at a time: the batch is planned (rules, transforms), then,
 * unless the job was stopped meanwhile, its deliveries are written in one transaction and the progress
 * recorded, so a cancelled job never leaves half a batch behind.
 */
export async function runReplayJob(loop: BatchLoop, job: ReplayJobInput): Promise<BatchLoopResult> {
  const progress: JobProgress = { total: job.total, processed: 0, created: 0, failed: 0 };
  let lastId = job.afterId;
  if (lastId === undefined) {
    const start = await startingAfterId(loop.store, job.selection);
    if (start === null) return { progress, stopped: false };
    if (start > 0) lastId = start;
  }
  for (;;) {
    if (await loop.shouldStop()) return { progress, stopped: true, lastId };
    const events = await loop.store.listEventBodies({ ...job.selection, afterId: lastId ?? 0, throughId: job.throughId }, JOB_BATCH_SIZE);
    if (events.length === 0) break;
    const batch: { eventId: number; deliveries: NewDelivery[] }[] = [];
    let failed = 0;
    for (const event of events) {
      // A held event is routed by its release, once: a bulk replay passes over it.
      if (event.quarantine === 'held') continue;
      try {
        // The ingest path's own planning: events the rules do not match get no deliveries.
        const deliveries = await job.planner.plan(event);
        if (deliveries.length > 0) batch.push({ eventId: event.id, deliveries });
      } catch (err) {
        if (!(err instanceof HookrelayError)) throw err; // a rule gone from today's rules: the job fails, as it says
        failed += 1; // a body that is not JSON (an imported event): nothing to replay
      }
    }
    if (await loop.shouldStop()) return { progress, stopped: true, lastId };
    const planned = batch.reduce((count, item) => count + item.deliveries.length, 0);
    // A dry run counts what it would create and writes nothing.
    const created = job.planner.dryRun ? planned : batch.length > 0 ? await loop.store.createDeliveriesForEvents(batch, 'replay') : 0;
    progress.processed += events.length;
    progress.created += created;
    progress.failed += failed;
    lastId = events.at(-1)!.id;
    await loop.onProgress({ ...progress, total: Math.max(progress.total, progress.processed), summary: job.planner.summary() });
    if (events.length < JOB_BATCH_SIZE) break;
    await yieldToEventLoop();
  }
  return { progress, stopped: false, lastId };
}
