import type { Logger } from 'pino';
import type { Config } from '../config.js';
import { stopPretenuring } from './pretenuring.js';
import type { Env } from '../rules/env-references.js';
import type { RuleSet } from '../rules/types.js';
import type { Outage, OutageStore } from '../store/outage-store.js';
import { createCircuitBreaker } from './circuit-breaker.js';
import { createDestinationLimiter, type DestinationView } from './destination-limiter.js';
import { createGuardedDispatcher } from './guarded-dispatcher.js';
import { OutageTracker } from './outage-tracker.js';
import { RuleVersions } from './rule-versions.js';
import { createSsrfGuard, type LookupFunction } from './ssrf-guard.js';
import { DeliveryLoop, type DeliveryLoopOptions, type DeliveryLoopStore } from './delivery-loop.js';

/** The limiter's destinations with their circuit state (the admin API's answer). */
export interface DestinationsReport {
  adaptive: boolean;
  destinations: (DestinationView & { pausedUntil: string | null })[];
}

export interface DeliverySideOptions {
  config: Readonly<Config>;
  store: DeliveryLoopStore & OutageStore;
  rules: () => RuleSet;
  env: Env;
  logger: Logger;
  /** DNS seam for the SSRF guard. */
  lookup?: LookupFunction;
  onAttempt?: DeliveryLoopOptions['onAttempt'];
  onOutageOpened?: (outage: Outage) => void;
  onOutageClosed?: (outage: Outage) => void;
}

/** The delivery side as the receiver sees it: on its own event loop (DeliverySide) or in the delivery thread (DeliveryThread). */
export interface DeliveryRunner {
  /** New deliveries are due: look now instead of at the next poll. */
  wake(): void;
  /** Attempts in flight. */
  readonly activeAttempts: number;
  /**
   * Where the worker runs, for the readiness report: `thread`, `event loop`, `restarting` while the thread is
   * started again, or `idle` while there is nothing to deliver and the thread is not started.
   */
  readonly state: 'thread' | 'event loop' | 'restarting' | 'idle';
  destinations(): DestinationsReport | Promise<DestinationsReport>;
  /** Starts claiming and sending. */
  start(): Promise<void>;
  /** Stops claiming, lets attempts finish for up to `graceMs`, then aborts the rest (they stay due) and closes its connections (not the store). */
  stop(graceMs: number): Promise<void>;
}

/**
 * What a node that delivers runs besides receiving: the worker with its destinations' limits and circuits,
 * and the outage tracker that redrives after an outage. The same parts on the receiver's event loop or in
 * the delivery thread.
 */
export interface DeliverySide extends DeliveryRunner {
  outages: OutageTracker;
  destinations(): DestinationsReport;
}

export function createDeliverySide(options: DeliverySideOptions): DeliverySide {
  const { config, store, rules, logger } = options;
  const dispatcher = createGuardedDispatcher({ guard: createSsrfGuard({ allowNetworks: config.delivery.allowNetworks, lookup: options.lookup }) });
  const limiter = createDestinationLimiter({ adaptive: config.delivery.adaptive });
  const breaker = createCircuitBreaker({ failureThreshold: config.delivery.failureThreshold, coolDownMs: config.delivery.coolDownMs });
  const outages = new OutageTracker({
    store,
    rules,
    breaker,
    settings: config.delivery.redrive,
    probeIntervalMs: config.delivery.coolDownMs,
    logger,
    onOpened: options.onOutageOpened,
    onClosed: options.onOutageClosed,
  });
  const loop = new DeliveryLoop({
    store,
    rules,
    ruleVersions: new RuleVersions(store, options.env),
    dispatcher,
    limiter,
    breaker,
    logger,
    defaultConcurrency: config.delivery.concurrency,
    maxInFlight: config.delivery.maxInFlight,
    batchSize: config.delivery.batchSize,
    leaseMs: config.delivery.leaseMs,
    pollIntervalMs: config.delivery.pollIntervalMs,
    claimDelayMs: config.delivery.claimDelayMs,
    outages,
    onAttempt: options.onAttempt,
  });
  return {
    wake: () => loop.wake(),
    get activeAttempts() {
      return loop.activeAttempts;
    },
    state: 'event loop',
    outages,
    destinations: () => ({
      adaptive: config.delivery.adaptive,
      destinations: limiter.destinations().map((view) => {
        const reopensAt = breaker.reopensAt(view.destination, Date.now());
        return { ...view, pausedUntil: reopensAt === null ? null : new Date(reopensAt).toISOString() };
      }),
    }),
    async start() {
      stopPretenuring();
      await outages.start();
      loop.start();
    },
    async stop(graceMs) {
      await loop.stop(graceMs);
      await outages.stop();
      await dispatcher.close();
    },
  };
}
