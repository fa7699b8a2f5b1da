import type { Logger } from 'pino';
import { HookrelayError } from '../../errors.js';
import type { Env } from '../../rules/env-references.js';
import type { RuleSet } from '../../rules/types.js';
import type { BulkDeliveryFilter, BulkStore } from '../../store/bulk-store.js';
import type { EventSelection, EventStore } from '../../store/event-store.js';
import type { Job, JobStore } from '../../store/job-store.js';
import { DEFAULT_ROUTE_MODE, ReplayRouter, type RouteMode } from '../replay-routing.js';
import { newestEventId } from './batches.js';
import { runReplayJob, type BatchLoop, type BatchLoopResult } from './replay-job.js';
import { checkReplayRule, planReplay, planRetry } from './bulk-plans.js';
import { runRetryJob } from './retry-job.js';
import type { RuleSetStore } from '../../store/rule-set-store.js';
import type { OutboxStore } from '../../store/outbox-store.js';
import type { SchemaStore } from '../../store/schema-store.js';
import { runSchemaBackfillJob } from './schema-backfill-job.js';

/** Jobs, and what replay, retry and schema backfill jobs read and write. */
export type JobRunnerStore = JobStore & EventStore & BulkStore & RuleSetStore & OutboxStore & SchemaStore;

export interface JobRunnerOptions {
  store: JobRunnerStore;
  rules: () => RuleSet;
  /** Values for `${NAME}` references of kept rule versions (original routing). */
  env: Env;
  logger: Logger;
  now: () => number;
  /** This node's id in the node registry: recorded with each job it runs. */
  nodeId: string;
  /** Jobs allowed to run at once; one more is refused with 409 (default 2). */
  maxRunning?: number;
}

const RESTART_ERROR = 'interrupted by a server restart or a stopped node; the deliveries it created are kept. Start a new job to cover the rest (processed shows how far it got).';
const SHUTDOWN_ERROR = 'interrupted by a server shutdown; the deliveries it created are kept. Start a new job to cover the rest (processed shows how far it got).';

/**
 * Runs bulk replays and retries in the background, a batch at a time, with their progress in the store
 * for polling from any node. Each job records the node running it. A cancel made on any node is seen
 * between batches: the loop reads the job's stored state before each batch and before writing it. A job
 * whose node stopped (no heartbeat, or deregistered) is marked failed by the next node that starts or
 * sweeps (`failOrphanedJobs`), never one a live node still runs; it is not resumed: the rules may have
 * changed, and a new job with the same filter is one request away.
 */
export class JobRunner {
  private readonly running = new Map<number, Promise<void>>();
  private readonly cancelled = new Set<number>();
  /** Jobs being sized (counted) before they are created: they count against `maxRunning` too. */
  private starting = 0;
  private stopping = false;

  private constructor(private readonly options: JobRunnerOptions) {}

  static async start(options: JobRunnerOptions): Promise<JobRunner> {
    const runner = new JobRunner(options);
    await runner.failOrphanedJobs();
    return runner;
  }

  /** Marks failed the running jobs no live node runs any more (at start, then with each heartbeat). */
  async failOrphanedJobs(): Promise<void> {
    const interrupted = await this.options.store.failOrphanedJobs(RESTART_ERROR);
    if (interrupted > 0) this.options.logger.warn({ jobs: interrupted }, 'admin jobs whose node stopped were marked failed');
  }

  async startReplay(filter: Record<string, unknown>, selection: EventSelection, ruleId: string | null, options: { route?: RouteMode; dryRun?: boolean } = {}): Promise<Job> {
    const route = options.route ?? DEFAULT_ROUTE_MODE;
    checkReplayRule(this.options.rules(), route, ruleId);
    return this.startJob(async () => {
      const router = new ReplayRouter(this.options.store, this.options.env, this.options.rules);
      const plan = await planReplay(this.options.store, router, { selection, ruleId, route, dryRun: options.dryRun ?? false });
      const job = await this.create('replay', filter, ruleId, plan.total);
      this.launch(job, (loop) => runReplayJob(loop, plan));
      return job;
    });
  }

  /** Dead deliveries whose rule is no longer in today's rule set are skipped, and counted in the job's summary. */
  async startRetry(filter: Record<string, unknown>, deadFilter: BulkDeliveryFilter): Promise<Job> {
    return this.startJob(async () => {
      const { retryable, total, summary } = await planRetry(this.options.store, deadFilter, this.options.rules());
      const job = await this.create('retry', filter, deadFilter.ruleId ?? null, total);
      this.launch(job, (loop) => runRetryJob(loop, retryable, total, summary));
      return { ...job, summary };
    });
  }

  /** Builds the observed schema again from every stored event (see runSchemaBackfillJob). */
  async startSchemaBackfill(): Promise<Job> {
    return this.startJob(async () => {
      const { store, now } = this.options;
      const throughId = await newestEventId(store);
      const total = await store.countEvents({});
      const job = await this.create('schema-backfill', {}, null, total);
      await store.restartSchemaLearning();
      this.launch(job, (loop) => runSchemaBackfillJob({ ...loop, store }, { total, throughId, pollMs: 250, stallMs: 120_000, now }));
      return job;
    });
  }

  /** Stops a running job before its next batch; its state is `cancelled` from now on. */
  async cancel(id: number): Promise<Job> {
    const job = await this.options.store.getJob(id);
    if (!job) throw new HookrelayError('not_found', `No job ${id}.`);
    if (job.state !== 'running') throw new HookrelayError('conflict', `Job ${id} has already finished (${job.state}).`, { state: job.state });
    // A job of this node stops before its next write; one of another node sees the stored state there.
    this.cancelled.add(id);
    await this.options.store.finishJob(id, 'cancelled', null);
    return (await this.options.store.getJob(id))!;
  }

  /** Shutdown: every job stops after its current batch and is marked failed. */
  async stop(): Promise<void> {
    this.stopping = true;
    await Promise.all(this.running.values());
  }

  /** Resolves when the job's background work has ended (tests and shutdown). */
  async settled(id: number): Promise<void> {
    await this.running.get(id);
  }

  private async startJob(start: () => Promise<Job>): Promise<Job> {
    if (this.stopping) throw new HookrelayError('shutting_down', 'The server is shutting down and starts no new jobs.');
    const busy = this.running.size + this.starting;
    if (busy >= (this.options.maxRunning ?? 2)) {
      throw new HookrelayError('conflict', `${busy} jobs are already running; wait for one to finish or cancel one.`, { running: [...this.running.keys()] });
    }
    this.starting += 1;
    try {
      return await start();
    } finally {
      this.starting -= 1;
    }
  }

  private create(kind: Job['kind'], filter: Record<string, unknown>, ruleId: string | null, total: number): Promise<Job> {
    return this.options.store.createJob({ kind, filter, ruleId, total, startedAt: this.options.now(), nodeId: this.options.nodeId });
  }

  private launch(job: Job, run: (loop: BatchLoop) => Promise<BatchLoopResult>): void {
    const { store, logger } = this.options;
    const loop: BatchLoop = {
      store,
      shouldStop: async () => {
        if (this.stopping || this.cancelled.has(job.id)) return true;
        // Cancelled (or failed as orphaned) through another node: the stored state says so.
        if ((await store.getJob(job.id))?.state !== 'running') this.cancelled.add(job.id);
        return this.cancelled.has(job.id);
      },
      onProgress: (progress) => store.updateJobProgress(job.id, progress),
    };
    const work = (async () => {
      try {
        const { progress } = await run(loop);
        if (this.cancelled.has(job.id)) return;
        if (this.stopping) await store.finishJob(job.id, 'failed', SHUTDOWN_ERROR);
        else await store.finishJob(job.id, 'done', null);
        logger.info({ jobId: job.id, kind: job.kind, ...progress }, 'admin job finished');
      } catch (err) {
        logger.error({ err, jobId: job.id, kind: job.kind }, 'admin job failed');
        await store.finishJob(job.id, 'failed', (err as Error).message ?? String(err)).catch(() => false);
      } finally {
        this.running.delete(job.id);
        this.cancelled.delete(job.id);
      }
    })();
    this.running.set(job.id, work);
  }
}
