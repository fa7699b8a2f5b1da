import type { BetterSqlite3 } from '../../sqlite-driver.js';
import { NODE_MISSED_HEARTBEATS, type ClusterNode, type GoneNode, type NewNode } from '../cluster-store.js';
import { LEFT_HEARTBEAT_MS, toClusterNode, toGoneNode, type NodeRow } from '../stored-rows.js';

/** Nodes silent this long are forgotten when another registers (they have long stopped being live). */
export const FORGET_NODES_AFTER_MS = 24 * 60 * 60 * 1000;

/** The nodes and leases tables, synchronous; times are this process's clock (`now`). */
export class NodeQueries {
  private readonly forget;
  private readonly register;
  private readonly heartbeat;
  private readonly deregister;
  private readonly live;
  private readonly gone;
  private readonly takeLease;
  private readonly dropLease;

  constructor(db: BetterSqlite3.Database) {
    this.forget = db.prepare('DELETE FROM nodes WHERE last_heartbeat < ?');
    this.register = db.prepare(`
      INSERT OR REPLACE INTO nodes (id, host, pid, role, version, rule_set_hash, heartbeat_ms, started_at, last_heartbeat)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`);
    // A node that has left stays left: a heartbeat racing its shutdown does not bring it back.
    this.heartbeat = db.prepare(`UPDATE nodes SET last_heartbeat = ?, rule_set_hash = ? WHERE id = ? AND heartbeat_ms <> ${LEFT_HEARTBEAT_MS}`);
    this.deregister = db.prepare(`UPDATE nodes SET heartbeat_ms = ${LEFT_HEARTBEAT_MS}, last_heartbeat = ? WHERE id = ?`);
    this.live = db.prepare<[number, number], NodeRow>('SELECT * FROM nodes WHERE last_heartbeat + heartbeat_ms * ? > ? ORDER BY started_at, id');
    this.gone = db.prepare<[number, number, number], NodeRow>(
      'SELECT * FROM nodes WHERE last_heartbeat + heartbeat_ms * ? <= ? ORDER BY last_heartbeat DESC, id LIMIT ?',
    );
    // Free, expired, or already the holder's: the holder takes it until expires_at.
    this.takeLease = db.prepare(`
      INSERT INTO leases (name, holder, expires_at) VALUES (?, ?, ?)
      ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
      WHERE leases.holder = excluded.holder OR leases.expires_at <= ?`);
    this.dropLease = db.prepare('DELETE FROM leases WHERE name = ? AND holder = ?');
  }

  registerNode(node: NewNode, now: number): void {
    this.forget.run(now - FORGET_NODES_AFTER_MS);
    this.register.run(node.id, node.host, node.pid, node.role, node.version, node.ruleSetHash, node.heartbeatMs, node.startedAt, now);
  }

  heartbeatNode(id: string, ruleSetHash: string | null, now: number): boolean {
    return this.heartbeat.run(now, ruleSetHash, id).changes === 1;
  }

  deregisterNode(id: string, now: number): void {
    this.deregister.run(now, id);
  }

  listLiveNodes(now: number): ClusterNode[] {
    return this.live.all(NODE_MISSED_HEARTBEATS, now).map((row) => toClusterNode(row));
  }

  listGoneNodes(now: number, limit: number): GoneNode[] {
    return this.gone.all(NODE_MISSED_HEARTBEATS, now, limit).map((row) => toGoneNode(row));
  }

  acquireLease(name: string, holder: string, ttlMs: number, now: number): boolean {
    return this.takeLease.run(name, holder, now + ttlMs, now).changes === 1;
  }

  releaseLease(name: string, holder: string): void {
    this.dropLease.run(name, holder);
  }
}
