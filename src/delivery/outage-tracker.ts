import type { Logger } from 'pino';
import type { RuleSet } from '../rules/types.js';
import { systemClock, type Clock } from '../store/clock.js';
import type { Outage, OutageStore } from '../store/outage-store.js';
import type { CircuitBreaker } from './circuit-breaker.js';
import type { OutageListener } from './delivery-loop.js';

export interface RedriveSettings {
  /** Rules without a `redrive:` of their own follow this. */
  enabled: boolean;
  /** Redriven dead letters started per second per rule, unless the rule sets its own. */
  maxPerSecond: number;
  /** How often open outages are read from the store and probed. */
  checkIntervalMs: number;
}

export interface OutageTrackerOptions {
  store: OutageStore;
  rules: () => RuleSet;
  breaker: CircuitBreaker;
  settings: RedriveSettings;
  /** The shortest time between two probes of one outage, over every node (the circuit's first pause). */
  probeIntervalMs: number;
  logger: Logger;
  /** The store's clock (default: the system clock), for the circuit's view of now. */
  clock?: Clock;
  /** Another node or this one opened an outage (called on the node whose record created it). */
  onOpened?: (outage: Outage) => void;
  /** Called on the one node that closed the outage, with the dead letters it made pending again. */
  onClosed?: (outage: Outage, redriven: readonly number[]) => void;
}

/**
 * Keeps outages in the store and redrives after them. The circuit breaker is per node and forgets on a
 * restart; the outage row is what every node shares: it opens when a circuit opens (once per destination),
 * and the first success at the destination closes it, redriving its retryable dead letters in the same
 * transaction, so exactly one node does it. An open outage without traffic is probed: its oldest dead
 * letter is sent again once per probe interval, whenever this node's circuit is not holding it back.
 */
export class OutageTracker implements OutageListener {
  /** Destinations this node knows to have an open outage (refreshed from the store every check). */
  private readonly open = new Map<string, Outage>();
  private readonly closing = new Set<string>();
  private readonly clock: Clock;
  private timer: NodeJS.Timeout | null = null;
  private checking: Promise<void> | null = null;
  private stopped = false;

  constructor(private readonly options: OutageTrackerOptions) {
    this.clock = options.clock ?? systemClock;
  }

  /** Reads the open outages (a restart forgets nothing) and checks them periodically. */
  async start(): Promise<void> {
    await this.check();
    this.schedule();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.checking;
  }

  /** Open outages as this node last read them. */
  openOutages(): Outage[] {
    return [...this.open.values()];
  }

  opened(destination: string, failingSince: number): void {
    void this.options.store
      .openOutage(destination, failingSince)
      .then(({ outage, opened }) => {
        this.open.set(destination, outage);
        if (opened) {
          this.options.logger.warn({ destination, outageId: outage.id, failingSince: new Date(failingSince).toISOString() }, 'destination failing: outage opened');
          this.options.onOpened?.(outage);
        }
      })
      .catch((err: unknown) => this.options.logger.error({ err, destination }, 'could not record an outage; the next failure tries again'));
  }

  answered(destination: string): void {
    if (!this.open.has(destination) || this.closing.has(destination)) return;
    this.closing.add(destination);
    void this.close(destination).finally(() => this.closing.delete(destination));
  }

  /** Rule id → ms between two of its redriven dead letters, for the rules that redrive today. */
  spacing(): Map<string, number> {
    const { enabled, maxPerSecond } = this.options.settings;
    const spacing = new Map<string, number>();
    for (const rule of this.options.rules().rules) {
      const choice = rule.redrive ?? { enabled };
      if (choice.enabled) spacing.set(rule.id, 1000 / (choice.maxPerSecond ?? maxPerSecond));
    }
    return spacing;
  }

  private async close(destination: string): Promise<void> {
    try {
      const closed = await this.options.store.closeOutage(destination, this.spacing());
      this.open.delete(destination);
      if (!closed) return; // another node closed it and redrove
      this.options.logger.info({ destination, outageId: closed.outage.id, redriven: closed.redriven.length }, 'destination recovered: outage closed');
      this.options.onClosed?.(closed.outage, closed.redriven);
    } catch (err) {
      this.options.logger.error({ err, destination }, 'could not close an outage; the next success tries again');
    }
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.checking = this.check().finally(() => {
        this.checking = null;
        this.schedule();
      });
    }, this.options.settings.checkIntervalMs);
    this.timer.unref();
  }

  private async check(): Promise<void> {
    try {
      const outages = await this.options.store.listOutages({ open: true, limit: 1000 });
      this.open.clear();
      for (const outage of outages) this.open.set(outage.destination, outage);
      const ruleIds = [...this.spacing().keys()];
      if (ruleIds.length === 0) return;
      const now = this.clock.now();
      for (const outage of outages) {
        // While this node's circuit is open, it holds every attempt back: a probe now would only wait.
        if (this.options.breaker.isOpen(outage.destination, now)) continue;
        const probed = await this.options.store.probeOutage(outage.id, { minIntervalMs: this.options.probeIntervalMs, ruleIds });
        if (probed !== null) this.options.logger.info({ destination: outage.destination, outageId: outage.id, deliveryId: probed }, 'outage probe: a dead letter is sent again');
      }
    } catch (err) {
      this.options.logger.error({ err }, 'could not read open outages; trying again at the next check');
    }
  }
}
