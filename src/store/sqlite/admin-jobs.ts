import type { BetterSqlite3 } from '../../sqlite-driver.js';
import { NODE_MISSED_HEARTBEATS } from '../cluster-store.js';
import type { Job, JobProgress, JobState, NewJob } from '../job-store.js';
import { toJob, type JobRow } from '../stored-rows.js';

/** The admin_jobs table (bulk replays and retries), synchronous; each call is one statement. */
export class AdminJobQueries {
  private readonly insert;
  private readonly byId;
  private readonly newest;
  private readonly progress;
  private readonly finish;
  private readonly failRunning;

  constructor(db: BetterSqlite3.Database) {
    this.insert = db.prepare<unknown[], JobRow>(`
      INSERT INTO admin_jobs (kind, state, filter, rule_id, total, started_at, node_id) VALUES (?, 'running', ?, ?, ?, ?, ?) RETURNING *`);
    this.byId = db.prepare<[number], JobRow>('SELECT * FROM admin_jobs WHERE id = ?');
    this.newest = db.prepare<[number], JobRow>('SELECT * FROM admin_jobs ORDER BY id DESC LIMIT ?');
    this.progress = db.prepare('UPDATE admin_jobs SET total = ?, processed = ?, created = ?, failed = ?, summary = coalesce(?, summary) WHERE id = ?');
    // Only a running job moves on: a cancel that got there first is never overwritten by "done".
    this.finish = db.prepare("UPDATE admin_jobs SET state = ?, error = ?, finished_at = ? WHERE id = ? AND state = 'running'");
    // A job is orphaned when no live node runs it: its node's row is gone or its heartbeat is too old.
    this.failRunning = db.prepare(`
      UPDATE admin_jobs SET state = 'failed', error = ?, finished_at = ?
      WHERE state = 'running'
        AND NOT EXISTS (SELECT 1 FROM nodes n WHERE n.id = admin_jobs.node_id AND n.last_heartbeat + n.heartbeat_ms * ? > ?)`);
  }

  create(job: NewJob): Job {
    return toJob(this.insert.get(job.kind, JSON.stringify(job.filter), job.ruleId, job.total, job.startedAt, job.nodeId)!);
  }

  get(id: number): Job | null {
    const row = this.byId.get(id);
    return row ? toJob(row) : null;
  }

  list(limit: number): Job[] {
    return this.newest.all(limit).map(toJob);
  }

  updateProgress(id: number, p: JobProgress): void {
    this.progress.run(p.total, p.processed, p.created, p.failed, p.summary ? JSON.stringify(p.summary) : null, id);
  }

  finishJob(id: number, state: Exclude<JobState, 'running'>, error: string | null, now: number): boolean {
    return this.finish.run(state, error, now, id).changes === 1;
  }

  /** Liveness and finished_at by the store's clock (`now`). */
  failOrphanedJobs(error: string, now: number): number {
    return this.failRunning.run(error, now, NODE_MISSED_HEARTBEATS, now).changes;
  }
}
