import type { Logger } from 'pino';
import { startAdminApi } from './admin/api/start-admin-api.js';
import type { JobRunner } from './operations/jobs/job-runner.js';
import type { StreamHub } from './admin/api/stream/stream-hub.js';
import type { DestinationsView } from './operations/view-schemas.js';
import { destinationsView } from './operations/views.js';
import { mountConsole } from './admin/console/console-router.js';
import { ConsoleSessions } from './admin/console/console-sessions.js';
import type { Config, SourceConfig } from './config.js';
import { createCircuitBreaker } from './delivery/circuit-breaker.js';
import { createDestinationLimiter } from './delivery/destination-limiter.js';
import { createGuardedDispatcher } from './delivery/guarded-dispatcher.js';
import { createSsrfGuard, type LookupFunction } from './delivery/ssrf-guard.js';
import { refusedDestinationWarnings } from './delivery/destination-warnings.js';
import { RuleVersions } from './delivery/rule-versions.js';
import { DeliveryWorker } from './delivery/worker.js';
import { KNOWN_EVENT_SCHEMAS } from './ingest/event-schemas.js';
import { createIngestHandler } from './ingest/ingest-handler.js';
import { HookrelayMetrics } from './metrics/hookrelay-metrics.js';
import { mountMetricsRoute } from './metrics/metrics-route.js';
import { RetentionWorker } from './retention/retention-worker.js';
import { keptRuleSetOf } from './rules/kept-rules.js';
import { planDeliveries } from './rules/plan.js';
import { RuleSetWatcher } from './rules/watcher.js';
import { isLoopbackHost, startServer, type ReadinessReport, type RunningServer } from './server.js';
import { ensureAdminToken, type AdminToken } from './admin-token.js';
import { ensureSourceSecrets, type GeneratedSecret } from './source-secrets.js';
import { openStore } from './store/open-store.js';
import type { Store } from './store/store.js';

export interface StartOptions {
  /** Values for `${NAME}` references in rule files (the process environment, read once by the CLI). */
  env?: Record<string, string | undefined>;
  /** DNS seam for the SSRF guard (tests resolve names without leaving the machine). */
  lookup?: LookupFunction;
}

export interface RunningHookrelay {
  /** Base URL of the webhook listener. */
  url: string;
  port: number;
  /** Base URL of the admin API, console and metrics: `url` unless `admin.port` gives them a listener of their own. */
  adminUrl: string;
  store: Store;
  rules: RuleSetWatcher;
  worker: DeliveryWorker | null;
  /** Null when `metrics.enabled` is false. */
  metrics: HookrelayMetrics | null;
  /** Null when `retention.enabled` is false. */
  retention: RetentionWorker | null;
  sources: readonly SourceConfig[];
  /** Secrets created on this start (first start without a configured secret); shown to the operator once. */
  generatedSecrets: GeneratedSecret[];
  /** Bearer token of the admin API (/admin/api). */
  adminToken: string;
  /** Set when the admin token was generated on this start (no HOOKRELAY_ADMIN_TOKEN, first start); shown once. */
  generatedAdminToken: AdminToken['generated'];
  /** Bulk replay and retry jobs of the admin API. */
  adminJobs: JobRunner;
  /** The open event streams of the admin API. */
  eventStreams: StreamHub;
  server: RunningServer;
  /** Graceful stop: stop accepting, finish in-flight requests and attempts, close the database. */
  close(): Promise<void>;
}

/** The composition root: config in, a running receiver and delivery worker out. The CLI and the tests start it this way. */
export async function startHookrelay(config: Readonly<Config>, logger: Logger, options: StartOptions = {}): Promise<RunningHookrelay> {
  const env = options.env ?? {};
  const store = await openStore(config, logger);
  let sources: SourceConfig[];
  let generated: GeneratedSecret[];
  let adminToken: AdminToken;
  let rules: RuleSetWatcher;
  try {
    // Generated values live in the store, so every node sharing it uses the same ones.
    const keeping = { store, dataDir: config.dataDir, fileCopies: config.database.url === undefined, logger };
    ({ sources, generated } = await ensureSourceSecrets(config.sources, keeping));
    adminToken = await ensureAdminToken(config.admin.token, keeping);
    for (const source of sources) {
      if (source.scheme === 'none') {
        logger.warn({ source: source.name }, `SIGNATURE CHECKS ARE OFF for source "${source.name}" (scheme: none): anyone who can reach this port can store events`);
      }
    }
    // A rule set is used only once kept: any node can then send a delivery with the version it was planned with.
    rules = await RuleSetWatcher.start({ dir: config.rulesDir, env, logger, keep: (ruleSet) => store.saveRuleSet(keptRuleSetOf(ruleSet)) });
  } catch (err) {
    await store.close();
    throw err;
  }
  const guard = createSsrfGuard({ allowNetworks: config.delivery.allowNetworks, lookup: options.lookup });
  const dispatcher = createGuardedDispatcher({ guard });
  const warnAboutDestinations = (): void => {
    for (const warning of refusedDestinationWarnings(rules.current(), guard)) logger.warn(warning);
  };
  warnAboutDestinations();
  rules.on('reload', warnAboutDestinations);
  const limiter = createDestinationLimiter({ adaptive: config.delivery.adaptive });
  const breaker = createCircuitBreaker({ failureThreshold: config.delivery.failureThreshold, coolDownMs: config.delivery.coolDownMs });
  const destinations = (): DestinationsView => destinationsView(config.delivery.adaptive, limiter.destinations(), (destination) => breaker.reopensAt(destination, Date.now()));
  const metrics = config.metrics.enabled
    ? new HookrelayMetrics({ sources: sources.map((s) => s.name), knownEvents: Object.keys(KNOWN_EVENT_SCHEMAS), maxEventLabels: config.metrics.maxEventLabels, outboxStats: (now) => store.outboxStats(now), destinations: config.delivery.enabled ? () => limiter.destinations() : undefined })
    : null;
  if (metrics) {
    rules.on('reload', () => metrics.recordRulesReload());
    rules.on('error', () => metrics.recordRulesReloadError());
  }
  const worker = config.delivery.enabled
    ? new DeliveryWorker({
        store,
        rules: () => rules.current(),
        ruleVersions: new RuleVersions(store, env),
        dispatcher,
        limiter,
        breaker,
        logger,
        defaultConcurrency: config.delivery.concurrency,
        maxInFlight: config.delivery.maxInFlight,
        batchSize: config.delivery.batchSize,
        leaseMs: config.delivery.leaseMs,
        pollIntervalMs: config.delivery.pollIntervalMs,
        onAttempt: metrics ? (attempt) => metrics.recordAttempt(attempt) : undefined,
      })
    : null;
  const retention = config.retention.enabled
    ? new RetentionWorker({ store, settings: config.retention, logger, onPass: metrics ? (report) => metrics.recordPrune(report) : undefined })
    : null;

  const ingest = createIngestHandler({
    sources: new Map(sources.map((s) => [s.name, s])),
    store,
    maxBody: config.maxBody,
    logger,
    planDeliveries: async (input) => {
      const ruleSet = rules.current();
      return { ruleSetHash: ruleSet.hash, deliveries: await planDeliveries(ruleSet, input) };
    },
    onDeliveriesCreated: () => worker?.wake(),
    onOutcome: metrics ? (outcome) => metrics.recordIngest(outcome) : undefined,
  });

  const consoleSessions = new ConsoleSessions({ store, publicUrl: config.publicUrl });
  const admin = await startAdminApi({
    token: adminToken,
    store,
    rules,
    worker,
    dispatcher,
    guard,
    sources,
    logger,
    sessions: consoleSessions,
    streams: config.admin.streams,
    env,
    ...(config.delivery.enabled && { destinations }),
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
    server = await startServer({
      config,
      logger,
      ingest,
      readiness,
      mountAdmin: (app) => {
        if (metrics) mountMetricsRoute(app, { metrics, token: config.metrics.token });
        app.use('/admin/api', admin.api.router);
        mountConsole(app, { sessions: consoleSessions, adminToken: admin.token.token });
      },
    });
  } catch (err) {
    rules.close();
    await dispatcher.close();
    await store.close();
    throw err;
  }
  worker?.start();
  retention?.start();
  if (config.admin.port === undefined && !isLoopbackHost(config.host)) {
    logger.warn(
      { host: config.host },
      `the admin API, console and metrics share the webhook listener on ${config.host}: anyone who can reach it can try the admin token; set HOOKRELAY_ADMIN_PORT to serve them on a loopback listener of their own`,
    );
  }

  let closing: Promise<void> | undefined;
  return {
    url: server.url,
    port: server.port,
    adminUrl: server.adminUrl,
    store,
    rules,
    worker,
    metrics,
    retention,
    sources,
    generatedSecrets: generated,
    adminToken: admin.token.token,
    generatedAdminToken: admin.token.generated,
    adminJobs: admin.jobs,
    eventStreams: admin.streams,
    server,
    close: () =>
      (closing ??= (async () => {
        // Streams never finish on their own: end them first, so the server's close does not wait for them.
        admin.streams.close();
        await server.close();
        await worker?.stop(config.server.shutdownGraceMs);
        await retention?.stop();
        await admin.jobs.stop();
        rules.close();
        await dispatcher.close();
        await store.close();
      })()),
  };
}
