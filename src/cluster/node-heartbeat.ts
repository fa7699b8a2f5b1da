import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import type { ClusterStore, NewNode, NodeRole } from '../store/cluster-store.js';
import { VERSION } from '../version.js';

export interface NodeHeartbeatOptions {
  store: ClusterStore;
  role: NodeRole;
  heartbeatMs: number;
  /** The rule set this node routes with now (it changes on a hot reload). */
  ruleSetHash: () => string | null;
  logger: Logger;
}

/** A node id: random per process start, short enough to read in a table. */
export function newNodeId(): string {
  return `node_${randomBytes(6).toString('hex')}`;
}

/**
 * This process in the node registry: registered at start, a heartbeat every `heartbeatMs` (with the rule
 * set it runs), removed on a clean stop. A missed heartbeat (the database away) is logged and tried again at
 * the next tick; a row that is gone (forgotten while the database was away that long) is registered again.
 */
export class NodeHeartbeat {
  readonly node: NewNode;
  private timer: NodeJS.Timeout | null = null;
  private beating: Promise<void> | null = null;
  private stopped = false;
  private afterBeat: (() => Promise<void>) | null = null;

  private constructor(private readonly options: NodeHeartbeatOptions) {
    this.node = {
      id: newNodeId(),
      host: hostname(),
      pid: process.pid,
      role: options.role,
      version: VERSION,
      ruleSetHash: options.ruleSetHash(),
      heartbeatMs: options.heartbeatMs,
      startedAt: Date.now(),
    };
  }

  /** Registers this node; a store that cannot take the row stops the start (like any failed write at start). */
  static async register(options: NodeHeartbeatOptions): Promise<NodeHeartbeat> {
    const heartbeat = new NodeHeartbeat(options);
    await options.store.registerNode(heartbeat.node);
    return heartbeat;
  }

  get id(): string {
    return this.node.id;
  }

  /** Registers where this node's admin API answers, once it listens: commands find it in the registry. */
  async announce(url: string): Promise<void> {
    this.node.url = url;
    await this.options.store.registerNode({ ...this.node, ruleSetHash: this.options.ruleSetHash() });
  }

  /** Work to do after each heartbeat (failing the jobs of nodes that stopped). */
  onBeat(work: () => Promise<void>): void {
    this.afterBeat = work;
  }

  /** Starts the timer (after the rest of the node is up). */
  start(): void {
    if (this.timer || this.stopped) return;
    this.timer = setInterval(() => {
      this.beating ??= this.beat().finally(() => {
        this.beating = null;
      });
    }, this.options.heartbeatMs);
    this.timer.unref();
  }

  /** One heartbeat now (also what the timer runs). */
  async beat(): Promise<void> {
    const { store, logger } = this.options;
    try {
      const ruleSetHash = this.options.ruleSetHash();
      if (!(await store.heartbeatNode(this.node.id, ruleSetHash))) await store.registerNode({ ...this.node, ruleSetHash });
      await this.afterBeat?.();
    } catch (err) {
      logger.warn({ err, nodeId: this.node.id }, 'node heartbeat failed; trying again at the next one');
    }
  }

  /** Stops heartbeating and removes this node from the registry (its jobs count as stopped at once). */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.beating;
    await this.options.store.deregisterNode(this.node.id).catch((err: unknown) => {
      this.options.logger.warn({ err, nodeId: this.node.id }, 'could not remove this node from the registry; it drops out when its heartbeat expires');
    });
  }
}
