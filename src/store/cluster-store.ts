/**
 * The node registry (cluster view) and leases (work one node does at a time). Heartbeat times and lease
 * ends are the store's clock (PostgreSQL: the database's, so nodes agree), returned in the caller's.
 */
export interface ClusterStore {
  /** Records this node as live from now; an id already registered is replaced. Forgets nodes silent for a day. */
  registerNode(node: NewNode): Promise<void>;
  /** Refreshes the node's heartbeat and rule-set hash; false when its row is gone (register again). */
  heartbeatNode(id: string, ruleSetHash: string | null): Promise<boolean>;
  /**
   * Marks the node as left (clean shutdown): no longer live from now, so its jobs are orphaned at once. Its
   * row stays, saying when it left, until it is forgotten with the nodes silent for a day.
   */
  deregisterNode(id: string): Promise<void>;
  /** The live nodes: last heartbeat younger than NODE_MISSED_HEARTBEATS of their own intervals; oldest first. */
  listLiveNodes(): Promise<ClusterNode[]>;
  /** Up to `limit` nodes still registered that are not live (left, or missing since their last heartbeat), most recent first. */
  listGoneNodes(limit: number): Promise<GoneNode[]>;
  /**
   * Takes or renews the lease `name` for `holder` until `ttlMs` from now: true when `holder` holds it
   * afterwards (it was free, expired, or already its own), false when another holder's lease is running.
   */
  acquireLease(name: string, holder: string, ttlMs: number): Promise<boolean>;
  /** Gives the lease back if `holder` holds it. */
  releaseLease(name: string, holder: string): Promise<void>;
}

/** A node is live until this many of its heartbeat intervals pass without a heartbeat. */
export const NODE_MISSED_HEARTBEATS = 3;

/** What a `hookrelay serve` process runs: `all` receives and delivers, `receiver` only receives, `worker` only delivers. */
export type NodeRole = 'receiver' | 'worker' | 'all';

export interface NewNode {
  /** Random per process start. */
  id: string;
  host: string;
  pid: number;
  role: NodeRole;
  version: string;
  ruleSetHash: string | null;
  /** How often this node heartbeats: with NODE_MISSED_HEARTBEATS, how long it stays live without one. */
  heartbeatMs: number;
  startedAt: number;
  /** Base URL of its admin API once it listens; kept by PostgreSQL (SQLite's node is found by its runtime file). */
  url?: string | null;
}

export interface ClusterNode extends NewNode {
  lastHeartbeat: number;
}

/**
 * A registered node that is not live. `left`: it stopped cleanly at `since`; otherwise it went silent: its
 * last heartbeat was at `since` (killed, crashed, or cut off from the database).
 */
export interface GoneNode extends Omit<ClusterNode, 'heartbeatMs' | 'lastHeartbeat'> {
  left: boolean;
  since: number;
}
