import type { Logger } from 'pino';
import type { DeliveryQueue } from '../../store/delivery-queue.js';
import type { OutageStore } from '../../store/outage-store.js';
import type { DeliveryRunner, DestinationsReport } from '../delivery-side.js';
import type { DeliveryThread } from './delivery-thread.js';

export interface OnDemandThreadOptions {
  /** The receiver's store: where it looks for work while the thread is not started. */
  store: Pick<DeliveryQueue, 'nextDueAt'> & Pick<OutageStore, 'listOutages'>;
  /** How often it looks while idle (`delivery.pollIntervalMs`): rows written by other processes wake no one here. */
  pollIntervalMs: number;
  logger: Logger;
}

/**
 * The delivery thread, started once there is something to deliver: a pending delivery (due now or later,
 * left from before, written by a replay, a retry or another node) or an open outage whose dead letters wait
 * for a redrive. A receiver without forwarding rules never starts it, and so never pays its memory (its own
 * heap, undici, its connection). Once started it runs until the node stops.
 */
export class OnDemandThread implements DeliveryRunner {
  private starting: Promise<void> | null = null;
  private poll: NodeJS.Timeout | null = null;
  private looking = false;
  private stopping = false;

  constructor(
    private readonly thread: Pick<DeliveryThread, 'start' | 'stop' | 'wake' | 'destinations' | 'state' | 'activeAttempts'>,
    private readonly options: OnDemandThreadOptions,
  ) {}

  /** `idle` until there is something to deliver, then the thread's own state. */
  get state(): 'idle' | 'thread' | 'restarting' {
    return this.starting ? this.thread.state : 'idle';
  }

  get activeAttempts(): number {
    return this.thread.activeAttempts;
  }

  /** A commit left deliveries pending: the thread is told, or started (it looks for due deliveries as it starts). */
  wake(): void {
    if (this.stopping) return;
    if (this.starting) this.thread.wake();
    else void this.begin({ retry: true });
  }

  destinations(): Promise<DestinationsReport> {
    return this.thread.destinations();
  }

  /**
   * Starts the thread now if there is work (a thread that cannot start then fails the node's start, as it would
   * without this), else looks again every poll interval. When the store cannot be read, it starts the thread,
   * which waits for the database itself.
   */
  async start(): Promise<void> {
    if (await this.hasWork().catch(() => true)) return this.begin({ retry: false });
    this.poll = setInterval(() => void this.look(), this.options.pollIntervalMs);
    this.poll.unref();
  }

  /** Waits for a start under way, so that no thread is left running, then stops the thread. */
  async stop(graceMs: number): Promise<void> {
    this.stopping = true;
    this.stopPolling();
    await this.starting?.catch(() => undefined);
    await this.thread.stop(graceMs);
  }

  /** Later starts never throw: a thread that cannot start is tried again (DeliveryThread's restarts) while webhooks are stored. */
  private begin(options: { retry: boolean }): Promise<void> {
    this.stopPolling();
    if (!this.starting) {
      this.options.logger.info('starting the delivery thread: there is something to deliver');
      this.starting = this.thread.start(options);
    }
    return this.starting;
  }

  private async look(): Promise<void> {
    if (this.looking || this.starting || this.stopping) return;
    this.looking = true;
    try {
      // The node may have begun stopping while the store answered.
      if ((await this.hasWork()) && !this.stopping) void this.begin({ retry: true });
    } catch (err) {
      this.options.logger.debug({ err }, 'could not look for deliveries; looking again at the next poll');
    } finally {
      this.looking = false;
    }
  }

  private async hasWork(): Promise<boolean> {
    const { store } = this.options;
    return (await store.nextDueAt()) !== null || (await store.listOutages({ open: true, limit: 1 })).length > 0;
  }

  private stopPolling(): void {
    if (this.poll) clearInterval(this.poll);
    this.poll = null;
  }
}
