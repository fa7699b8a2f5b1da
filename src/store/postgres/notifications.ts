import pg from 'pg';
import { withDeadline } from './sql-params.js';

/** The channel on which a commit that made deliveries due announces it; the payload is the sender's id. */
export const DUE_CHANNEL = 'hookrelay_deliveries_due';
/** The channel on which a commit that stored new events announces it (event streams); same payload. */
export const EVENTS_CHANNEL = 'hookrelay_events_stored';

/** How often the listening connection is asked a trivial query, and how long its answer may take. */
export const LISTEN_PING = { everyMs: 10_000, deadlineMs: 5_000 };

/**
 * Listens for other nodes' notifications (deliveries due, events stored) on a connection of its own (LISTEN
 * needs a session: it cannot go through the pool, nor through a pooler in transaction mode, where polling
 * carries the load instead). A lost connection is opened again after a pause that grows to `maxBackoffMs`;
 * meanwhile the workers' and streams' polls find the work, only later. A listening connection only
 * receives, so a peer gone without a word (a partition) would go unnoticed: a ping with a deadline finds it.
 */
export class NodeNotifications {
  private client: pg.Client | null = null;
  private closed = false;
  private retryTimer: NodeJS.Timeout | null = null;
  private pingTimer: NodeJS.Timeout | null = null;
  private backoffMs = 100;

  constructor(
    private readonly config: pg.ClientConfig,
    private readonly ownId: string,
    /** What to call on a notification, by channel; each is also called once listening starts. */
    private readonly handlers: ReadonlyMap<string, () => void>,
    private readonly maxBackoffMs = 5_000,
    private readonly ping = LISTEN_PING,
  ) {}

  /** Resolves once listening (or once the first try failed: notifications are an optimisation). */
  async start(): Promise<void> {
    await this.connect();
  }

  get listening(): boolean {
    return this.client !== null;
  }

  private async connect(): Promise<void> {
    if (this.closed) return;
    const client = new pg.Client(this.config);
    let gone = false;
    const lost = (): void => {
      if (gone) return;
      gone = true;
      if (this.client === client) {
        this.client = null;
        if (this.pingTimer) clearInterval(this.pingTimer);
        this.pingTimer = null;
      }
      client.removeAllListeners('notification');
      // A query still unanswered makes end() destroy the socket rather than wait on a silent peer.
      void client.end().catch(() => {});
      this.reconnectLater();
    };
    client.on('error', lost);
    client.on('end', lost);
    client.on('notification', (message) => {
      if (message.payload !== this.ownId) this.handlers.get(message.channel)?.();
    });
    try {
      await client.connect();
      for (const channel of this.handlers.keys()) await client.query(`LISTEN ${channel}`);
    } catch {
      lost();
      return;
    }
    if (this.closed) {
      await client.end().catch(() => {});
      return;
    }
    this.client = client;
    this.backoffMs = 100;
    this.pingTimer = setInterval(() => {
      client.query(withDeadline({ text: 'SELECT 1' }, this.ping.deadlineMs)).catch(lost);
    }, this.ping.everyMs);
    this.pingTimer.unref();
    // Work may have fallen due, and events been stored, while no one listened.
    for (const handler of this.handlers.values()) handler();
  }

  private reconnectLater(): void {
    if (this.closed || this.retryTimer) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      void this.connect();
    }, this.backoffMs);
    this.retryTimer.unref();
    this.backoffMs = Math.min(this.maxBackoffMs, this.backoffMs * 2);
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    if (this.pingTimer) clearInterval(this.pingTimer);
    const client = this.client;
    this.client = null;
    if (client) {
      client.removeAllListeners('end');
      client.removeAllListeners('error');
      client.on('error', () => {});
      await client.end().catch(() => {});
    }
  }
}

/**
 * Announces on one channel to the other nodes, at most once per `minGapMs`: a NOTIFY is a transaction of its
 * own (an XID, a commit record, a WAL flush, and PostgreSQL's lock that serialises notifying commits), so under
 * load one per group commit would cost nearly as much as the commits themselves. The first announcement of a
 * quiet spell goes at once; those asked for within the gap are folded into one sent when it ends. Sent after
 * the commit, off the path of the acknowledgement; a failure only leaves the others to their poll.
 */
export class Announcer {
  private busy = false;
  private again = false;
  private lastSentAt = -Infinity;

  constructor(
    private readonly db: pg.Pool,
    private readonly channel: string,
    private readonly ownId: string,
    private readonly minGapMs: number,
  ) {}

  announce(): void {
    if (this.busy) {
      this.again = true;
      return;
    }
    this.busy = true;
    const wait = this.lastSentAt + this.minGapMs - performance.now();
    if (wait > 0) setTimeout(() => this.send(), wait).unref();
    else this.send();
  }

  private send(): void {
    this.lastSentAt = performance.now();
    this.db
      .query('SELECT pg_notify($1, $2)', [this.channel, this.ownId])
      .catch(() => {})
      .finally(() => {
        this.busy = false;
        if (this.again) {
          this.again = false;
          this.announce();
        }
      });
  }
}
