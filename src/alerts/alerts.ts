import type { Logger } from 'pino';
import type { Outage } from '../store/outage-store.js';
import { AlertDamping } from './alert-damping.js';
import type { OutboxStore } from '../store/outbox-store.js';
import type { StoredDrift } from '../store/schema-store.js';

export interface AlertsOptions {
  /** Sends one message's text (see createAlertSender). */
  send: (text: string) => unknown;
  store: OutboxStore;
  logger: Logger;
  dampingMs: number;
  deadLetterThreshold: number;
  checkIntervalMs: number;
  now?: () => number;
}

function minutes(ms: number): string {
  const m = Math.round(ms / 60_000);
  return m < 1 ? `${Math.max(1, Math.round(ms / 1000))} s` : `${m} min`;
}

/**
 * The alert webhook's messages: a destination failing (its outage opened), recovered (closed, with what was
 * redriven), and dead letters reaching the threshold. Outage messages come from the one node that opened or
 * closed the outage; each subject is damped (AlertDamping).
 */
export class Alerts {
  private readonly damping: AlertDamping;
  private readonly now: () => number;
  private timer: NodeJS.Timeout | null = null;
  /** Whether the last reading was at or above the threshold: one message per crossing, not per reading. */
  private aboveThreshold = false;

  constructor(private readonly options: AlertsOptions) {
    this.now = options.now ?? Date.now;
    this.damping = new AlertDamping({ windowMs: options.dampingMs, send: options.send, now: this.now });
  }

  outageOpened(outage: Outage): void {
    this.damping.notify(`destination ${outage.destination}`, `hookrelay: destination ${outage.destination} is failing (circuit open, failing since ${new Date(outage.openedAt).toISOString()}).`);
  }

  /** `outage.redriven` counts the probes too. */
  outageClosed(outage: Outage): void {
    const lasted = minutes((outage.closedAt ?? this.now()) - outage.openedAt);
    const n = outage.redriven;
    const redrive = n > 0 ? `; ${n} dead letter${n === 1 ? '' : 's'} redriven` : '';
    this.damping.notify(`destination ${outage.destination}`, `hookrelay: destination ${outage.destination} recovered after ${lasted}${redrive}.`);
  }

  /**
   * A drift of the sender's body shape, from the node that recorded it (each drift once); damped per
   * (source, event name). `text` is the drift described, `link` where the console shows its first event.
   */
  schemaDrift(drift: StoredDrift, text: string, link: string | null): void {
    this.damping.notify(`schema ${drift.source} ${drift.event}`, `hookrelay: schema drift: ${text}${link ? ` ${link}` : ''}.`);
  }

  start(): void {
    const tick = (): void => {
      void this.checkDeadLetters().finally(() => {
        if (this.timer === null) return;
        this.timer = setTimeout(tick, this.options.checkIntervalMs);
        this.timer.unref();
      });
    };
    this.timer = setTimeout(tick, 0);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.damping.close();
  }

  async checkDeadLetters(): Promise<void> {
    try {
      const { dead } = await this.options.store.outboxStats();
      const above = dead >= this.options.deadLetterThreshold;
      if (above && !this.aboveThreshold) {
        this.damping.notify('dead letters', `hookrelay: ${dead} dead letters (threshold ${this.options.deadLetterThreshold}).`);
      }
      this.aboveThreshold = above;
    } catch (err) {
      this.options.logger.error({ err }, 'could not count dead letters for alerts');
    }
  }
}
