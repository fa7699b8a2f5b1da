import type pg from 'pg';
import { NODE_MISSED_HEARTBEATS, type ClusterNode, type GoneNode, type NewNode } from '../cluster-store.js';
import { LEFT_HEARTBEAT_MS, toClusterNode, toGoneNode, type NodeRow } from '../stored-rows.js';
import type { ClockOffset } from './clock-offset.js';
import { named } from './sql-params.js';

/** The database clock in unix ms: heartbeats and leases are judged by one clock, whatever the nodes' say. */
const DB_NOW = '(extract(epoch FROM clock_timestamp()) * 1000)::bigint';
/** Nodes silent this long are forgotten when another registers (they have long stopped being live). */
const FORGET_AFTER_MS = 24 * 60 * 60 * 1000;

const FORGET = named('forget_nodes', `DELETE FROM nodes WHERE last_heartbeat < ${DB_NOW} - $1`);
const REGISTER = named('register_node', `
  INSERT INTO nodes (id, host, pid, role, version, rule_set_hash, heartbeat_ms, started_at, last_heartbeat, url)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, ${DB_NOW}, $9)
  ON CONFLICT (id) DO UPDATE SET host = excluded.host, pid = excluded.pid, role = excluded.role, version = excluded.version,
    rule_set_hash = excluded.rule_set_hash, heartbeat_ms = excluded.heartbeat_ms, started_at = excluded.started_at,
    last_heartbeat = excluded.last_heartbeat, url = excluded.url`);
// A node that has left stays left: a heartbeat racing its shutdown does not bring it back.
const HEARTBEAT = named('node_heartbeat', `UPDATE nodes SET last_heartbeat = ${DB_NOW}, rule_set_hash = $2 WHERE id = $1 AND heartbeat_ms <> ${LEFT_HEARTBEAT_MS}`);
const DEREGISTER = named('node_left', `UPDATE nodes SET heartbeat_ms = ${LEFT_HEARTBEAT_MS}, last_heartbeat = ${DB_NOW} WHERE id = $1`);
const LIVE = named('live_nodes', `SELECT * FROM nodes WHERE last_heartbeat + heartbeat_ms * $1 > ${DB_NOW} ORDER BY started_at, id`);
const GONE = named('gone_nodes', `SELECT * FROM nodes WHERE last_heartbeat + heartbeat_ms * $1 <= ${DB_NOW} ORDER BY last_heartbeat DESC, id LIMIT $2`);
// Free, expired, or already the holder's: the holder takes it until expires_at (database clock).
const TAKE_LEASE = named('take_lease', `
  INSERT INTO leases (name, holder, expires_at) VALUES ($1, $2, ${DB_NOW} + $3)
  ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
  WHERE leases.holder = excluded.holder OR leases.expires_at <= ${DB_NOW}`);
// A running job is orphaned when no live node runs it: its node's row is gone or its heartbeat is too old.
const FAIL_ORPHANED = named('fail_orphaned_jobs', `
  UPDATE admin_jobs SET state = 'failed', error = $1, finished_at = $2
  WHERE state = 'running'
    AND NOT EXISTS (SELECT 1 FROM nodes n WHERE n.id = admin_jobs.node_id AND n.last_heartbeat + n.heartbeat_ms * $3 > ${DB_NOW})`);

/** The nodes and leases tables, and the jobs they orphan. */
export class NodeQueries {
  constructor(
    private readonly db: pg.Pool,
    private readonly clock: ClockOffset,
  ) {}

  async registerNode(node: NewNode): Promise<void> {
    await this.db.query({ ...FORGET, values: [FORGET_AFTER_MS] });
    await this.db.query({ ...REGISTER, values: [node.id, node.host, node.pid, node.role, node.version, node.ruleSetHash, node.heartbeatMs, node.startedAt, node.url ?? null] });
  }

  async heartbeatNode(id: string, ruleSetHash: string | null): Promise<boolean> {
    return (await this.db.query({ ...HEARTBEAT, values: [id, ruleSetHash] })).rowCount === 1;
  }

  async deregisterNode(id: string): Promise<void> {
    await this.db.query({ ...DEREGISTER, values: [id] });
  }

  async listLiveNodes(): Promise<ClusterNode[]> {
    const { rows } = await this.db.query<NodeRow>({ ...LIVE, values: [NODE_MISSED_HEARTBEATS] });
    return rows.map((row) => toClusterNode(row, (t) => this.clock.toNode(t)));
  }

  async listGoneNodes(limit: number): Promise<GoneNode[]> {
    const { rows } = await this.db.query<NodeRow>({ ...GONE, values: [NODE_MISSED_HEARTBEATS, limit] });
    return rows.map((row) => toGoneNode(row, (t) => this.clock.toNode(t)));
  }

  async failOrphanedJobs(error: string, now: number): Promise<number> {
    return (await this.db.query({ ...FAIL_ORPHANED, values: [error, now, NODE_MISSED_HEARTBEATS] })).rowCount ?? 0;
  }

  async acquireLease(name: string, holder: string, ttlMs: number): Promise<boolean> {
    return (await this.db.query({ ...TAKE_LEASE, values: [name, holder, ttlMs] })).rowCount === 1;
  }

  async releaseLease(name: string, holder: string): Promise<void> {
    await this.db.query('DELETE FROM leases WHERE name = $1 AND holder = $2', [name, holder]);
  }
}
