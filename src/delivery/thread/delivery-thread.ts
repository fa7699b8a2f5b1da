import { Worker } from 'node:worker_threads';
import type { Logger } from 'pino';
import type { Config } from '../../config.js';
import type { DeliveryRunner, DestinationsReport } from '../delivery-side.js';
import type { Outage } from '../../store/outage-store.js';
import { ruleSetMessageOf } from '../../rules/rule-set-message.js';
import type { RuleSet } from '../../rules/types.js';
import type { RuleSetWatcher } from '../../rules/watcher.js';
import { startThreadPool } from './thread-priority.js';
import type { AttemptNote, DeliveryThreadData, FromDeliveryThread, ToDeliveryThread } from './messages.js';
import { writeThreadLogEntry } from './thread-log.js';

export interface DeliveryThreadOptions {
  config: Readonly<Config>;
  env: Record<string, string | undefined>;
  /** The receiver's rules: the thread gets today's set when it starts and every reload after. */
  rules: Pick<RuleSetWatcher, 'current' | 'on' | 'off'>;
  logger: Logger;
  onAttempt?: (attempt: AttemptNote) => void;
  onOutageOpened?: (outage: Outage) => void;
  onOutageClosed?: (outage: Outage) => void;
  /** The thread died and is to be started again (metrics). */
  onRestart?: () => void;
  /** Test seam: the thread's code (default delivery-thread-entry.js). */
  entry?: URL;
}

/** After the thread dies (a bug, out of memory), it is started again after this long, doubling up to the maximum. */
const RESTART_MS = 1_000;
const RESTART_MAX_MS = 30_000;
/** A thread that could not start because the store could not be reached is tried again at least this often: the database may be back any moment. */
const STORE_RESTART_MAX_MS = 5_000;

/** A start that failed because the store could not be reached (a database outage): never a reason to stop the node. */
const storeUnavailable = (err: unknown): boolean => (err as { code?: unknown } | undefined)?.code === 'store_unavailable';

/**
 * The thread's code: this module's compiled sibling. Run from the TypeScript sources (the test runner),
 * the thread runs the build, which `npm test` makes first.
 */
function entryUrl(): URL {
  const fromSources = import.meta.url.endsWith('.ts');
  return new URL(fromSources ? '../../../dist/delivery/thread/delivery-thread-entry.js' : './delivery-thread-entry.js', import.meta.url);
}

/**
 * The receiver's handle on the delivery thread (delivery-thread-entry.ts): wakes it when deliveries are due,
 * asks it for its destinations, writes its log lines to the receiver's log, and restarts it should it die.
 * Nothing is lost when it dies: its claimed deliveries fall due again when their leases end.
 */
export class DeliveryThread implements DeliveryRunner {
  private thread: Worker | null = null;
  /** Whether `thread` has started (said ready) and not died since. */
  private started = false;
  private wakePending = false;
  private active = 0;
  private stopping = false;
  private restartMs = RESTART_MS;
  private restartTimer: NodeJS.Timeout | null = null;
  private nextRequest = 1;
  private readonly requests = new Map<number, { resolve: (view: DestinationsReport) => void; reject: (err: Error) => void }>();
  private stopped: (() => void) | null = null;
  private readonly onReload = (ruleSet: RuleSet): void => this.post({ type: 'rules', rules: ruleSetMessageOf(ruleSet) });

  constructor(private readonly options: DeliveryThreadOptions) {
    options.rules.on('reload', this.onReload);
  }

  /**
   * Starts the thread; rejects when it could not load the rules or build its parts, unless `retry`. When it
   * could not reach the store (or failed at all, with `retry`), the node runs on (it stores webhooks) and the
   * thread is started again until it can.
   */
  async start(options: { retry?: boolean } = {}): Promise<void> {
    await startThreadPool();
    if (this.stopping) return;
    try {
      await this.spawn();
    } catch (err) {
      if (options.retry || storeUnavailable(err)) {
        this.scheduleRestart(err);
        return;
      }
      this.options.rules.off('reload', this.onReload);
      throw err;
    }
  }

  /** `restarting` until the thread has started, and while it is being started again after dying or failing to start. */
  get state(): 'thread' | 'restarting' {
    return this.started ? 'thread' : 'restarting';
  }

  /** Attempts in flight in the thread, as of its last report. */
  get activeAttempts(): number {
    return this.active;
  }

  /** New deliveries are due: one message per turn of the event loop, however many commits asked. */
  wake(): void {
    if (this.wakePending) return;
    this.wakePending = true;
    setImmediate(() => {
      this.wakePending = false;
      this.post({ type: 'wake' });
    });
  }

  destinations(): Promise<DestinationsReport> {
    const thread = this.thread;
    if (!thread) return Promise.resolve({ adaptive: this.options.config.delivery.adaptive, destinations: [] });
    const id = this.nextRequest++;
    return new Promise((resolve, reject) => {
      this.requests.set(id, { resolve, reject });
      this.post({ type: 'destinations', id });
    });
  }

  /** Stops claiming, lets attempts finish for up to `graceMs`, then aborts the rest; resolves once the thread has closed its connection. */
  async stop(graceMs: number): Promise<void> {
    this.stopping = true;
    this.options.rules.off('reload', this.onReload);
    if (this.restartTimer) clearTimeout(this.restartTimer);
    const thread = this.thread;
    if (!thread) return;
    const exited = new Promise<void>((resolve) => thread.once('exit', () => resolve()));
    const stopped = new Promise<void>((resolve) => (this.stopped = resolve));
    this.post({ type: 'stop', graceMs });
    await Promise.race([stopped, exited]);
    await thread.terminate();
  }

  private post(message: ToDeliveryThread): void {
    this.thread?.postMessage(message);
  }

  private spawn(): Promise<void> {
    const { config, env, logger } = this.options;
    // A restarted thread starts with today's rules; reloads while it was down were posted to no one.
    const data: DeliveryThreadData = { config, env, logLevel: logger.level, rules: ruleSetMessageOf(this.options.rules.current()) };
    const thread = new Worker(this.options.entry ?? entryUrl(), { workerData: data, name: 'hookrelay-delivery' });
    this.thread = thread;
    return new Promise<void>((resolve, reject) => {
      let ready = false;
      thread.on('message', (message: FromDeliveryThread) => {
        if (message.type === 'ready') {
          ready = true;
          this.started = true;
          this.restartMs = RESTART_MS;
          resolve();
        } else if (message.type === 'failed') {
          if (!ready) reject(Object.assign(new Error(`the delivery thread could not start: ${message.message}`), { code: message.code }));
        } else this.receive(message);
      });
      thread.on('error', (err) => {
        logger.error({ err }, 'the delivery thread failed');
        if (!ready) reject(err);
      });
      thread.on('exit', () => {
        if (this.thread === thread) {
          this.thread = null;
          this.started = false;
        }
        this.active = 0;
        for (const request of this.requests.values()) request.reject(new Error('the delivery thread stopped'));
        this.requests.clear();
        if (!ready) reject(new Error('the delivery thread stopped before it started'));
        else if (!this.stopping) this.scheduleRestart();
      });
    });
  }

  /** Starts the thread again after a pause that grows with each failure; `startError`: why the last start failed (none: it died). */
  private scheduleRestart(startError?: unknown): void {
    if (this.stopping) return;
    const maxMs = storeUnavailable(startError) ? STORE_RESTART_MAX_MS : RESTART_MAX_MS;
    const delay = Math.min(maxMs, this.restartMs);
    this.restartMs = Math.min(maxMs, this.restartMs * 2);
    this.options.onRestart?.();
    if (startError === undefined) {
      this.options.logger.error({ restartInMs: delay }, 'the delivery thread stopped unexpectedly; starting it again (its claimed deliveries fall due when their leases end)');
    } else {
      this.options.logger.error({ err: startError, restartInMs: delay }, 'the delivery thread could not start; trying again (webhooks are still received and stored)');
    }
    this.restartTimer = setTimeout(() => {
      this.restartTimer = null;
      if (this.stopping) return;
      this.spawn().catch((err: unknown) => this.scheduleRestart(err));
    }, delay);
    this.restartTimer.unref();
  }

  private receive(message: Exclude<FromDeliveryThread, { type: 'ready' | 'failed' }>): void {
    switch (message.type) {
      case 'log':
        writeThreadLogEntry(this.options.logger, message.entry);
        break;
      case 'attempts':
        this.active = message.active;
        for (const attempt of message.attempts) this.options.onAttempt?.(attempt);
        break;
      case 'destinations': {
        const request = this.requests.get(message.id);
        this.requests.delete(message.id);
        request?.resolve(message.view);
        break;
      }
      case 'outage':
        if (message.change === 'opened') this.options.onOutageOpened?.(message.outage);
        else this.options.onOutageClosed?.(message.outage);
        break;
      case 'stopped':
        this.stopped?.();
        break;
    }
  }
}
