import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { startServeProcess, type CliProcess } from '../../helpers/cli-process.js';
import { rulesDirWith } from '../../helpers/rules.js';
import { makeTempDir } from '../../helpers/temp-dir.js';
import { postWebhook } from './post-webhook.js';
import { sleep } from './soak.js';

/** A start loads the whole CLI and opens the pool: seconds, many of them while the other nodes are busy. */
const START_TIMEOUT_MS = 120_000;

export type ServeProcess = CliProcess & { url: string };

/** One event the sender made, and what the cluster answered to it. */
export interface SentEvent {
  transferId: string;
  raw: Buffer;
  /** Matches the forwarding rule. */
  matches: boolean;
  /** 200 answers it got (first copy and repeats, from any node). */
  acks: number;
  /** The event ids those answers named (one, if it was stored once). */
  ids: Set<number>;
}

/**
 * A fixed set of `hookrelay serve` processes on one database, each in a slot that can be killed and
 * started again (on a new port), and a load balancer in front of them.
 */
export class Cluster {
  readonly slots: (ServeProcess | null)[];
  private turn = 0;
  private readonly agent: Agent;

  constructor(
    private readonly env: Record<string, string>,
    size: number,
    private readonly secret: string,
  ) {
    this.slots = new Array(size).fill(null);
    this.agent = new Agent({ connections: 16 });
  }

  async start(slot: number): Promise<ServeProcess> {
    const node = await startServeProcess({ ...this.env, HOOKRELAY_DATA_DIR: makeTempDir() }, [], START_TIMEOUT_MS);
    this.slots[slot] = node;
    return node;
  }

  /** kill -9: the node gets no chance to finish anything. The balancer stops sending to it at once. */
  async kill(slot: number): Promise<void> {
    const node = this.slots[slot];
    if (!node) return;
    this.slots[slot] = null;
    node.child.kill('SIGKILL');
    await node.exited;
  }

  /** SIGTERM every node; resolves with their exit codes. */
  async stop(): Promise<(number | null)[]> {
    const nodes = this.slots.filter((n): n is ServeProcess => n !== null);
    this.slots.fill(null);
    for (const node of nodes) node.child.kill('SIGTERM');
    const exits = await Promise.all(nodes.map((n) => n.exited));
    await this.agent.close();
    return exits.map((e) => e.code);
  }

  /** Any live node's URL (for admin reads). */
  anyUrl(): string {
    const node = this.slots.find((n) => n !== null);
    if (!node) throw new Error('no live node');
    return node.url;
  }

  /**
   * Posts an event as a load balancer would: round robin (or from `startSlot`), and on a connection error
   * or a 503 the same request goes to the next live node, until one answers 200 or `deadlineMs` passes.
   * Any other answer is recorded in `unexpected`.
   */
  async post(event: SentEvent, unexpected: string[], startSlot?: number, deadlineMs = 20_000): Promise<boolean> {
    const deadline = Date.now() + deadlineMs;
    let slot = startSlot ?? this.turn++;
    while (Date.now() < deadline) {
      const node = this.slots[slot % this.slots.length];
      slot += 1;
      if (!node) {
        if (this.slots.every((n) => n === null)) await sleep(20);
        continue;
      }
      try {
        const { status, text } = await postWebhook(node.url, event.raw, this.secret, this.agent);
        if (status === 200) {
          event.acks += 1;
          event.ids.add((JSON.parse(text) as { id: number }).id);
          return true;
        }
        if (status !== 503) {
          unexpected.push(`HTTP ${status}: ${text}`);
          return false;
        }
      } catch {
        // the node died under this request (or just before it): another node takes it
      }
    }
    return false;
  }

  /** An admin API GET on any live node, as JSON. */
  async admin<T>(path: string, token: string): Promise<T> {
    const response = await request(`${this.anyUrl()}/admin/api${path}`, { dispatcher: this.agent, headers: { authorization: `Bearer ${token}` } });
    const text = await response.body.text();
    if (response.statusCode !== 200) throw new Error(`GET ${path}: HTTP ${response.statusCode} ${text}`);
    return JSON.parse(text) as T;
  }
}

/**
 * The environment of every node: one database, the same secret, token and rules, and a short lease so
 * the deliveries a killed node had claimed fall due again within seconds (the rule timeout stays below it).
 */
export function clusterEnv(options: { databaseUrl: string; sinkUrl: string; secret: string; adminToken: string }): Record<string, string> {
  const configFile = join(makeTempDir(), 'hookrelay.yaml');
  writeFileSync(
    configFile,
    [
      'delivery:',
      '  allowNetworks: [127.0.0.1/32]',
      '  leaseMs: 1500',
      '  pollIntervalMs: 100',
      'database:',
      '  poolSize: 3',
      '  connectTimeoutMs: 3000',
      'retention:',
      '  enabled: false',
      '',
    ].join('\n'),
  );
  const rulesDir = rulesDirWith({
    'forward.yaml': [
      'id: forward-card',
      'on: [transfer:succeeded]',
      'where:',
      '  result.paymentMethod: BUY_WITH_CARD',
      'to:',
      `  url: ${options.sinkUrl}`,
      'timeout: 1s',
      'retry:',
      '  schedule: [0s, 100ms, 200ms, 400ms, 800ms, 1s, 1s, 1s, 1s, 1s]',
      '',
    ].join('\n'),
  });
  return {
    HOOKRELAY_CONFIG: configFile,
    HOOKRELAY_DATABASE_URL: options.databaseUrl,
    HOOKRELAY_RULES_DIR: rulesDir,
    HOOKRELAY_SECRET: options.secret,
    HOOKRELAY_ADMIN_TOKEN: options.adminToken,
  };
}
