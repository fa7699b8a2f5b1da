import type { Logger } from 'pino';
import type { Config, SourceConfig } from './config.js';
import { createCircuitBreaker } from './delivery/circuit-breaker.js';
import { createDestinationLimiter } from './delivery/destination-limiter.js';
import { createGuardedDispatcher } from './delivery/guarded-dispatcher.js';
import { createSsrfGuard, type LookupFunction } from './delivery/ssrf-guard.js';
import { refusedDestinationWarnings } from './delivery/destination-warnings.js';
import { DeliveryWorker } from './delivery/worker.js';
import { deliveriesForEvent } from './ingest/deliveries-for-event.js';
import { createIngestHandler } from './ingest/ingest-handler.js';
import { RuleSetWatcher } from './rules/watcher.js';
import { startServer, type ReadinessReport, type RunningServer } from './server.js';
import { ensureSourceSecrets, type GeneratedSecret } from './source-secrets.js';
import { SqliteStore } from './store/sqlite/sqlite-store.js';
import type { Store } from './store/store.js';

export interface StartOptions {
  /** Values for `${NAME}` references in rule files (the process environment, read once by the CLI). */
  env?: Record<string, string | undefined>;
  /** DNS seam for the SSRF guard (tests resolve names without leaving the machine). */
  lookup?: LookupFunction;
}

export interface RunningHookrelay {
  url: string;
  port: number;
  store: Store;
  rules: RuleSetWatcher;
  worker: DeliveryWorker | null;
  sources: readonly SourceConfig[];
  /** Secrets created on this start (first start without a configured secret); shown to the operator once. */
  generatedSecrets: GeneratedSecret[];
  server: RunningServer;
  /** Graceful stop: stop accepting, finish in-flight requests and attempts, close the database. */
  close(): Promise<void>;
}

/** The composition root: config in, a running receiver and delivery worker out. The CLI and the tests start it this way. */
export async function startHookrelay(config: Readonly<Config>, logger: Logger, options: StartOptions = {}): Promise<RunningHookrelay> {
  const { sources, generated } = ensureSourceSecrets(config.sources, config.dataDir);
  for (const source of sources) {
    if (source.scheme === 'none') {
      logger.warn({ source: source.name }, `SIGNATURE CHECKS ARE OFF for source "${source.name}" (scheme: none): anyone who can reach this port can store events`);
    }
  }
  const rules = await RuleSetWatcher.start({ dir: config.rulesDir, env: options.env ?? {}, logger });
  const store = new SqliteStore({ dataDir: config.dataDir, durability: config.durability });
  const guard = createSsrfGuard({ allowNetworks: config.delivery.allowNetworks, lookup: options.lookup });
  const dispatcher = createGuardedDispatcher({ guard });
  const warnAboutDestinations = (): void => {
    for (const warning of refusedDestinationWarnings(rules.current(), guard)) logger.warn(warning);
  };
  warnAboutDestinations();
  rules.on('reload', warnAboutDestinations);
  const worker = config.delivery.enabled
    ? new DeliveryWorker({
        store,
        rules: () => rules.current(),
        dispatcher,
        limiter: createDestinationLimiter(),
        breaker: createCircuitBreaker({ failureThreshold: config.delivery.failureThreshold, coolDownMs: config.delivery.coolDownMs }),
        logger,
        defaultConcurrency: config.delivery.concurrency,
        maxInFlight: config.delivery.maxInFlight,
        batchSize: config.delivery.batchSize,
        leaseMs: config.delivery.leaseMs,
        pollIntervalMs: config.delivery.pollIntervalMs,
      })
    : null;

  const ingest = createIngestHandler({
    sources: new Map(sources.map((s) => [s.name, s])),
    store,
    maxBody: config.maxBody,
    logger,
    planDeliveries: (input) => deliveriesForEvent(rules.current(), input),
    onDeliveriesCreated: () => worker?.wake(),
  });

  const readiness = async (): Promise<ReadinessReport> => {
    const status = rules.status();
    const rulesCheck = { hash: status.hash, ruleCount: status.ruleCount, loadedAt: status.loadedAt.toISOString(), lastError: status.lastError };
    try {
      await store.checkWritable();
      return { ready: true, checks: { store: 'ok', rules: rulesCheck } };
    } catch (err) {
      return { ready: false, checks: { store: (err as Error).message, rules: rulesCheck } };
    }
  };

  let server: RunningServer;
  try {
    server = await startServer({ config, logger, ingest, readiness });
  } catch (err) {
    rules.close();
    await dispatcher.close();
    await store.close();
    throw err;
  }
  worker?.start();

  let closing: Promise<void> | undefined;
  return {
    url: server.url,
    port: server.port,
    store,
    rules,
    worker,
    sources,
    generatedSecrets: generated,
    server,
    close: () =>
      (closing ??= (async () => {
        await server.close();
        await worker?.stop(config.server.shutdownGraceMs);
        rules.close();
        await dispatcher.close();
        await store.close();
      })()),
  };
}
