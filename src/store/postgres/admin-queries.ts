import type pg from 'pg';
import type { BulkDeliveryFilter } from '../bulk-store.js';
import type { Job, JobProgress, JobState, NewJob } from '../job-store.js';
import { rejoinOrder } from '../join-back.js';
import type { DeliveryCounts } from '../outbox-store.js';
import { toJob, type JobRow } from '../stored-rows.js';
import type { ClockOffset } from './clock-offset.js';
import { eventSelectionSql } from './event-filter-sql.js';
import { named, SqlParams } from './sql-params.js';
import { HISTORY, moveDeliveries } from './delivery-tables.js';

const CREATE_JOB = named('create_job', "INSERT INTO admin_jobs (kind, state, filter, rule_id, total, started_at, node_id) VALUES ($1, 'running', $2, $3, $4, $5, $6) RETURNING *");
// A progress report without a summary keeps the one recorded before.
const JOB_PROGRESS = named('job_progress', 'UPDATE admin_jobs SET total = $1, processed = $2, created = $3, failed = $4, summary = coalesce($5, summary) WHERE id = $6');
// Only a running job moves on: a cancel (from any node) that got there first is never overwritten by "done".
const FINISH_JOB = named('finish_job', "UPDATE admin_jobs SET state = $1, error = $2, finished_at = $3 WHERE id = $4 AND state = 'running'");
// One snapshot: a single statement sees one moment, so the three counts agree.
const RULE_COUNTS = named('rule_counts', `
  SELECT r.rule_id,
    (SELECT count(*) FROM deliveries d WHERE d.rule_id = r.rule_id AND d.state = 'pending') AS pending,
    (SELECT count(*) FROM deliveries d WHERE d.rule_id = r.rule_id AND d.state = 'delivered') AS delivered,
    (SELECT count(*) FROM deliveries d WHERE d.rule_id = r.rule_id AND d.state = 'dead') AS dead
  FROM unnest($1::text[]) AS r(rule_id)`);
// A page of events: one lookup in deliveries_event per event.
const EVENT_COUNTS = named('event_counts', 'SELECT event_id, state, count(*) AS n FROM deliveries WHERE event_id = ANY($1::bigint[]) GROUP BY event_id, state');

// Rows rejoining their keys take their places in the order of $1 (the rejoin order, join-back.ts).
const RETRY_DEAD = named('retry_dead', `
  WITH r AS (
    SELECT given.id, nextval('delivery_order_seq') AS seq FROM (SELECT * FROM unnest($1::bigint[]) WITH ORDINALITY AS g(id, n) ORDER BY n) given
  ), ${moveDeliveries({
    name: 'retried', from: HISTORY, using: 'r', where: 'd.id = r.id',
    set: {
      state: "'pending'", next_attempt_at: '$2::bigint', lease_token: 'NULL::text', dead_reason: 'NULL::text', blocked_since: 'NULL::bigint',
      updated_at: '$3::bigint', order_seq: 'CASE WHEN d.order_key IS NULL THEN NULL::bigint ELSE r.seq END',
    },
  })}
  SELECT id FROM retried_in`);

/** Jobs, per-rule counts and bulk retries of dead letters. */
export class AdminQueries {
  constructor(
    private readonly db: pg.Pool,
    private readonly clock: ClockOffset,
  ) {}

  async createJob(job: NewJob): Promise<Job> {
    const { rows } = await this.db.query<JobRow>({ ...CREATE_JOB, values: [job.kind, JSON.stringify(job.filter), job.ruleId, job.total, job.startedAt, job.nodeId] });
    return toJob(rows[0]!);
  }

  async getJob(id: number): Promise<Job | null> {
    const { rows } = await this.db.query<JobRow>('SELECT * FROM admin_jobs WHERE id = $1', [id]);
    return rows[0] ? toJob(rows[0]) : null;
  }

  async listJobs(limit: number): Promise<Job[]> {
    return (await this.db.query<JobRow>('SELECT * FROM admin_jobs ORDER BY id DESC LIMIT $1', [limit])).rows.map(toJob);
  }

  async updateJobProgress(id: number, p: JobProgress): Promise<void> {
    await this.db.query({ ...JOB_PROGRESS, values: [p.total, p.processed, p.created, p.failed, p.summary ? JSON.stringify(p.summary) : null, id] });
  }

  async finishJob(id: number, state: Exclude<JobState, 'running'>, error: string | null, now: number): Promise<boolean> {
    return (await this.db.query({ ...FINISH_JOB, values: [state, error, now, id] })).rowCount === 1;
  }

  async deliveryCountsByRule(ruleIds: readonly string[]): Promise<Map<string, DeliveryCounts>> {
    const { rows } = await this.db.query<{ rule_id: string } & DeliveryCounts>({ ...RULE_COUNTS, values: [[...ruleIds]] });
    return new Map(rows.map((r) => [r.rule_id, { pending: r.pending, delivered: r.delivered, dead: r.dead }]));
  }

  async deliveryCountsByEvent(eventIds: readonly number[]): Promise<Map<number, DeliveryCounts>> {
    const counts = new Map(eventIds.map((id): [number, DeliveryCounts] => [id, { pending: 0, delivered: 0, dead: 0 }]));
    if (eventIds.length === 0) return counts;
    const { rows } = await this.db.query<{ event_id: number; state: keyof DeliveryCounts; n: number }>({ ...EVENT_COUNTS, values: [[...eventIds]] });
    for (const row of rows) counts.get(row.event_id)![row.state] = row.n;
    return counts;
  }

  private deadWhere(filter: BulkDeliveryFilter, params: SqlParams): string {
    const { ruleId, eventId, afterId, todaysRules, ...eventFilter } = filter;
    const where = ["d.state = 'dead'", eventSelectionSql(eventFilter, params)];
    if (ruleId !== undefined) where.push(`d.rule_id = ${params.add(ruleId)}`);
    if (eventId !== undefined) where.push(`d.event_id = ${params.add(eventId)}`);
    if (afterId !== undefined) where.push(`d.id > ${params.add(afterId)}`);
    if (todaysRules !== undefined) {
      const sent = `(d.rule_id = ANY(${params.add([...todaysRules.ids])}::text[]) OR d.rule_set_hash IN (SELECT hash FROM rule_sets WHERE kind = 'one-off'))`;
      where.push(todaysRules.removed ? `NOT ${sent}` : sent);
    }
    return where.join(' AND ');
  }

  async countDeadByRule(filter: BulkDeliveryFilter): Promise<Map<string, number>> {
    const params = new SqlParams();
    const where = this.deadWhere(filter, params);
    const { rows } = await this.db.query<{ rule_id: string; n: number }>(
      `SELECT d.rule_id, count(*) AS n FROM ${HISTORY} d JOIN events e ON e.id = d.event_id AND e.written_at = d.written_at WHERE ${where} GROUP BY d.rule_id ORDER BY d.rule_id`,
      params.values,
    );
    return new Map(rows.map((r) => [r.rule_id, r.n]));
  }

  async countDead(filter: BulkDeliveryFilter): Promise<number> {
    const params = new SqlParams();
    const where = this.deadWhere(filter, params);
    return (await this.db.query<{ n: number }>(`SELECT count(*) AS n FROM ${HISTORY} d JOIN events e ON e.id = d.event_id AND e.written_at = d.written_at WHERE ${where}`, params.values)).rows[0]!.n;
  }

  /** One statement: up to `limit` matching dead deliveries (ascending id) pending again and due at `now`. */
  /** Picks the rows (locked, skipping rows another retry holds), then makes them pending in the rejoin order of join-back.ts. */
  async retryDead(client: pg.PoolClient, filter: BulkDeliveryFilter, limit: number, now: number): Promise<number[]> {
    const params = new SqlParams();
    const where = this.deadWhere(filter, params);
    const picked = await client.query<{ id: number }>(
      `SELECT d.id FROM ${HISTORY} d JOIN events e ON e.id = d.event_id AND e.written_at = d.written_at WHERE ${where} ORDER BY d.id LIMIT ${params.add(limit)} FOR UPDATE OF d SKIP LOCKED`,
      params.values,
    );
    if (picked.rows.length === 0) return [];
    const ids = rejoinOrder(picked.rows).map((row) => row.id);
    const { rows } = await client.query<{ id: number }>({ ...RETRY_DEAD, values: [ids, this.clock.toDatabase(now), now] });
    return rows.map((r) => r.id).sort((a, b) => a - b);
  }
}
