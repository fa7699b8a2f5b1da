/**
 * Bulk jobs (replay, retry) as every node sees them: their progress and how they ended.
 */
export interface JobStore {
  createJob(job: NewJob): Promise<Job>;
  getJob(id: number): Promise<Job | null>;
  /** Newest first. */
  listJobs(limit: number): Promise<Job[]>;
  /** Records a running job's counters (absolute values). */
  updateJobProgress(id: number, progress: JobProgress): Promise<void>;
  /** Moves a running job to a final state; false when it was not running any more (cancelled meanwhile). */
  finishJob(id: number, state: Exclude<JobState, 'running'>, error: string | null): Promise<boolean>;
  /**
   * Marks failed every running job whose node is no longer live (stopped heartbeating, deregistered, or
   * never recorded): a restart or a crash interrupted it. Jobs of live nodes are left alone. Returns how many.
   */
  failOrphanedJobs(error: string): Promise<number>;
}

export type JobKind = 'replay' | 'retry' | 'schema-backfill';
export type JobState = 'running' | 'done' | 'cancelled' | 'failed';

export interface JobProgress {
  total: number;
  processed: number;
  created: number;
  failed: number;
  /** What the job found beyond its counters (a bulk replay's plan per rule), as JSON; kept as given. */
  summary?: Record<string, unknown> | null;
}

export interface NewJob {
  kind: JobKind;
  /** The filter the job was started with, kept for display. */
  filter: Record<string, unknown>;
  ruleId: string | null;
  total: number;
  startedAt: number;
  /** The node running it (null: recorded before nodes had ids). */
  nodeId: string | null;
}

export interface Job extends NewJob, JobProgress {
  id: number;
  state: JobState;
  finishedAt: number | null;
  error: string | null;
}
