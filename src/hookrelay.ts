import type { Logger } from 'pino';
import { startAdminApi } from './admin/api/start-admin-api.js';
import type { JobRunner } from './operations/jobs/job-runner.js';
import type { StreamHub } from './admin/api/stream/stream-hub.js';
import type { DestinationsView } from './operations/view-schemas.js';
import { ConsoleSessions } from './admin/console/console-sessions.js';
import { FailedAuthLimiter } from './admin/failed-auth-limiter.js';
import { nodeRoleOf, type Config, type SourceConfig } from './config.js';
import { NodeHeartbeat } from './cluster/node-heartbeat.js';
import { notAReceiverHandler } from './ingest/not-a-receiver.js';
import { createAlertSender } from './alerts/alert-sender.js';
import { Alerts } from './alerts/alerts.js';
import type { OutageTracker } from './delivery/outage-tracker.js';
import type { DeliveryRunner } from './delivery/delivery-side.js';
import { lazyGuardedDispatcher } from './delivery/lazy-dispatcher.js';
import { createSsrfGuard, type LookupFunction } from './delivery/ssrf-guard.js';
import { refusedDestinationWarnings } from './delivery/destination-warnings.js';
import { DeliveryThread } from './delivery/thread/delivery-thread.js';
import type { AttemptNote } from './delivery/thread/messages.js';
import { BodyBudget } from './ingest/body-budget.js';
import { KNOWN_EVENT_SCHEMAS } from './ingest/event-schemas.js';
import { createIngestHandler } from './ingest/ingest-handler.js';
import { lazyHandler } from './http/lazy-handler.js';
import { HookrelayMetrics } from './metrics/hookrelay-metrics.js';
import { mountMetricsRoute } from './metrics/metrics-route.js';
import { RetentionWorker } from './retention/retention-worker.js';
import { SchemaLearner } from './schema/schema-learner.js';
import { describeDrift, describeRulesTouched } from './schema/drift-text.js';
import { rulesTouchedBy } from './schema/rules-touched.js';
import type { StoredDrift } from './store/schema-store.js';
import { keptRuleSetOf } from './rules/kept-rules.js';
import type { RuleSet } from './rules/types.js';
import { planDeliveries } from './rules/plan.js';
import { RULE_FILE_LIMITS } from './rules/rule-files.js';
import { ContractWatcher } from './contracts/contract-watcher.js';
import { RuleSetWatcher } from './rules/watcher.js';
import { isLoopbackHost, startServer, type ReadinessReport, type RunningServer } from './server.js';
import { ensureAdminToken, type AdminToken } from './admin-token.js';
import { ensureSourceSecrets, type GeneratedSecret } from './source-secrets.js';
import { openStore } from './store/open-store.js';
import { secretOrigins } from './runtime/setting-origins.js';
import { configureTransformSandbox } from './rules/transform-sandbox.js';
import { CommitHealth } from './readiness.js';
import { retryWhileStoreUnavailable } from './startup-retry.js';
import type { Outage } from './store/outage-store.js';
import type { Store } from './store/store.js';

/** How often the store's ability to commit is probed while no webhook commit has shown it (readiness). */
const READINESS_PROBE_MS = 1_000;

export interface StartOptions {
  /** Values for `${NAME}` references in rule files (the process environment, read once by the CLI). */
  env?: Record<string, string | undefined>;
  /** DNS seam for the SSRF guard (tests resolve names without leaving the machine); needs `delivery.thread: false`. */
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
  /** Null on a node that does not deliver (role receiver). */
  worker: DeliveryRunner | null;
  /** Null when `metrics.enabled` is false. */
  metrics: HookrelayMetrics | null;
  /** Bytes of webhook bodies held now, over every request (`server.maxBufferedBytes`). */
  bodyBudget: BodyBudget;
  /** Null when `retention.enabled` is false. */
  retention: RetentionWorker | null;
  /** Learns the observed schema and its drifts while this node holds the `schema` lease; null when `schema.enabled` is false. */
  schemaLearner: SchemaLearner | null;
  /** Outages and their redrive; null on a node that does not deliver (role receiver) and with the delivery thread (it runs there). */
  outages: OutageTracker | null;
  /** Null without `alerts.url`. */
  alerts: Alerts | null;
  sources: readonly SourceConfig[];
  /** Secrets created on this start (first start without a configured secret); shown to the operator once. */
  generatedSecrets: GeneratedSecret[];
  /** This node in the node registry: its id, role, host. */
  node: NodeHeartbeat;
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
  const role = nodeRoleOf(config);
  // Explain, dry runs and replay previews render here; deliveries render in the delivery thread's own sandbox.
  configureTransformSandbox(config.rules.transform);
  if (config.delivery.enabled === false) logger.warn('delivery.enabled is deprecated: set role: receiver (HOOKRELAY_ROLE=receiver, --role receiver) instead; this node runs role receiver');
  const delivers = role !== 'receiver';
  const inThread = delivers && config.delivery.thread;
  if (inThread && options.lookup) throw new Error('options.lookup applies to the delivery worker on the event loop: set delivery.thread to false');
  // A database that is starting, restarting or out of reach is waited for, up to database.startupTimeoutMs.
  const startup = { timeoutMs: config.database.startupTimeoutMs, logger };
  // Set once every part has started: until then /readyz says not ready, though the server already listens.
  let started = false;
  const store = await retryWhileStoreUnavailable('open the store', () => openStore(config, logger), startup);
  let sources: SourceConfig[];
  let generated: GeneratedSecret[];
  let adminToken: AdminToken;
  let rules: RuleSetWatcher;
  let contracts: ContractWatcher;
  try {
    // Generated values live in the store, so every node sharing it uses the same ones.
    const keeping = { store, dataDir: config.dataDir, fileCopies: config.database.url === undefined, logger };
    ({ sources, generated } = await retryWhileStoreUnavailable('keep the source secrets', () => ensureSourceSecrets(config.sources, keeping), startup));
    adminToken = await retryWhileStoreUnavailable('keep the admin token', () => ensureAdminToken(config.admin.token, keeping), startup);
    for (const source of sources) {
      if (source.scheme === 'none') {
        logger.warn({ source: source.name }, `SIGNATURE CHECKS ARE OFF for source "${source.name}" (scheme: none): anyone who can reach this port can store events`);
      }
    }
    // A rule set is used only once kept: any node can then send a delivery with the version it was planned with.
    // At start the database may still be out of reach; a reload later reports a failure and keeps the last set.
    const keep = (ruleSet: RuleSet): Promise<void> => store.saveRuleSet(keptRuleSetOf(ruleSet));
    rules = await RuleSetWatcher.start({
      dir: config.rulesDir,
      limits: { ...RULE_FILE_LIMITS, maxFileBytes: config.rulesMaxFileBytes },
      env,
      logger,
      keep: (ruleSet) => (started ? keep(ruleSet) : retryWhileStoreUnavailable('keep the rule set', () => keep(ruleSet), startup)),
    });
    try {
      contracts = await ContractWatcher.start(config.contracts.dir!, logger);
    } catch (err) {
      rules.close();
      throw err;
    }
  } catch (err) {
    await store.close();
    throw err;
  }
  const guard = createSsrfGuard({ allowNetworks: config.delivery.allowNetworks, lookup: options.lookup });
  const dispatcher = lazyGuardedDispatcher(guard);
  const warnAboutDestinations = (): void => {
    for (const warning of refusedDestinationWarnings(rules.current(), guard)) logger.warn(warning);
  };
  warnAboutDestinations();
  rules.on('reload', warnAboutDestinations);
  // Set once the server listens; the closures below read it then.
  let delivery: DeliveryRunner | null = null;
  const destinations = (): DestinationsView | Promise<DestinationsView> => delivery?.destinations() ?? { adaptive: config.delivery.adaptive, destinations: [] };
  const alerts = config.alerts.url
    ? new Alerts({
        send: createAlertSender({ url: config.alerts.url, secret: config.alerts.secret, dispatcher: dispatcher.get, logger }),
        store,
        logger,
        dampingMs: config.alerts.dampingMs,
        deadLetterThreshold: config.alerts.deadLetterThreshold,
        checkIntervalMs: config.alerts.checkIntervalMs,
      })
    : null;
  const bodyBudget = new BodyBudget(config.server.maxBufferedBytes);
  const metrics = config.metrics.enabled
    ? new HookrelayMetrics({
        sources: sources.map((s) => s.name),
        knownEvents: Object.keys(KNOWN_EVENT_SCHEMAS),
        maxEventLabels: config.metrics.maxEventLabels,
        outboxStats: (now) => store.outboxStats(now),
        destinations: delivers ? async () => (await destinations()).destinations : undefined,
        deadLettersByRule: async () => {
          const counts = await store.deliveryCountsByRule(rules.current().rules.map((rule) => rule.id));
          return new Map([...counts].map(([rule, c]) => [rule, c.dead]));
        },
        failingDestinations: async () => (await store.listOutages({ open: true, limit: 1000 })).map((outage) => outage.destination),
        blockedKeyCounts: () => store.blockedKeyCounts(),
        orderedRules: () => rules.current().rules.filter((rule) => rule.order).map((rule) => rule.id),
        bufferedBytes: () => bodyBudget.bufferedBytes,
      })
    : null;
  if (metrics) {
    rules.on('reload', () => metrics.recordRulesReload());
    rules.on('error', () => metrics.recordRulesReloadError());
  }
  const deliveryHooks = {
    onAttempt: metrics ? (attempt: AttemptNote) => metrics.recordAttempt(attempt) : undefined,
    onOutageOpened: alerts ? (outage: Outage) => alerts.outageOpened(outage) : undefined,
    onOutageClosed: alerts ? (outage: Outage) => alerts.outageClosed(outage) : undefined,
  };
  // On the event loop: built now, started once the server listens. Its modules (undici among them) load only then.
  const side = delivers && !inThread ? (await import('./delivery/delivery-side.js')).createDeliverySide({ config, store, rules: () => rules.current(), env, logger, lookup: options.lookup, ...deliveryHooks }) : null;
  const outages = side?.outages ?? null;
  let node: NodeHeartbeat;
  try {
    const registration = { store, role, heartbeatMs: config.cluster.heartbeatMs, ruleSetHash: () => rules.current().hash, logger };
    node = await retryWhileStoreUnavailable('register this node', () => NodeHeartbeat.register(registration), startup);
  } catch (err) {
    rules.close();
    await dispatcher.close();
    await store.close();
    throw err;
  }
  const retention = config.retention.enabled
    ? new RetentionWorker({ store, settings: config.retention, logger, leaseHolder: node.id, onPass: metrics ? (report) => metrics.recordPrune(report) : undefined })
    : null;
  // Set once the server listens: drift alerts link to the console there (or at publicUrl).
  let consoleBase: string | null = config.publicUrl ?? null;
  const announceDrifts = (drifts: StoredDrift[]): void => {
    const described = rules.current().rules.map((rule) => rule.describe());
    for (const drift of drifts) {
      metrics?.recordSchemaDrift(drift);
      const text = describeDrift(drift) + describeRulesTouched(rulesTouchedBy(drift, described));
      logger.warn({ drift }, `schema drift: ${text}`);
      alerts?.schemaDrift(drift, text, consoleBase ? `${consoleBase.replace(/\/$/, '')}/console#/events/${drift.eventId}` : null);
    }
  };
  const schemaLearner = config.schema.enabled ? new SchemaLearner({ store, settings: config.schema, logger, leaseHolder: node.id, onDrifts: announceDrifts }) : null;

  const health = new CommitHealth({ probe: () => store.checkWritable(), intervalMs: READINESS_PROBE_MS, deadlineMs: config.database.commitTimeoutMs, logger });
  const ingest = role === 'worker' ? notAReceiverHandler() : createIngestHandler({
    sources: new Map(sources.map((s) => [s.name, s])),
    store,
    maxBody: config.maxBody,
    budget: bodyBudget,
    maxDepth: config.maxDepth,
    logger,
    routeEvent: async (input) => {
      const ruleSet = rules.current();
      return { ruleSetHash: ruleSet.hash, deliveries: await planDeliveries(ruleSet, input) };
    },
    contracts: () => contracts.current(),
    secretOrigins: secretOrigins(config, env),
    onOutcome: (outcome) => {
      if (outcome.code === 'store_unavailable') health.failed('webhook commits fail (store_unavailable)');
      else if (outcome.status === 200) health.succeeded();
      metrics?.recordIngest(outcome);
    },
  });

  const consoleSessions = new ConsoleSessions({ store, publicUrl: config.publicUrl });
  const authLimiter = new FailedAuthLimiter(config.admin.authFailures);
  const readiness = async (): Promise<ReadinessReport> => {
    const status = rules.status();
    const rulesCheck = { hash: status.hash, ruleCount: status.ruleCount, loadedAt: status.loadedAt.toISOString(), lastError: status.lastError };
    // A worker is healthy (/healthz) but not ready for webhooks: load balancers that check /readyz skip it.
    const roleCheck = role === 'worker' ? 'worker: receives no webhooks' : role;
    // Reported, never a reason to refuse webhooks: the node stores them while the delivery thread restarts.
    const deliveryCheck = delivery ? { delivery: delivery.state } : {};
    // Answered from what the node knows now (commit outcomes, the probe): never a wait on the database.
    const storeCheck = health.status;
    return {
      ready: started && role !== 'worker' && storeCheck === 'ok',
      checks: { startup: started ? 'complete' : 'starting', store: storeCheck, rules: rulesCheck, role: roleCheck, ...deliveryCheck },
    };
  };

  const admin = await startAdminApi({
    token: adminToken,
    store,
    rules,
    dispatcher: dispatcher.get,
    guard,
    sources,
    logger,
    sessions: consoleSessions,
    limiter: authLimiter,
    streams: config.admin.streams,
    maxDepth: config.maxDepth,
    env,
    node: node.node,
    readiness,
    contracts: () => contracts.current(),
    ...(delivers && { destinations }),
  });
  node.onBeat(() => admin.jobs.failOrphanedJobs());
  // The cluster view shows a rule edit at once, not at the next heartbeat.
  rules.on('reload', () => void node.beat());


  let server: RunningServer | undefined;
  health.start();
  try {
    server = await startServer({
      config,
      logger,
      ingest,
      readiness,
      ...(metrics && { onConnectionDropped: () => metrics.recordConnectionDropped() }),
      mountAdmin: (app) => {
        if (metrics) mountMetricsRoute(app, { metrics, token: config.metrics.token, limiter: authLimiter });
        // Built on their first request: a receiver that only takes webhooks never loads them.
        app.use('/admin/api', lazyHandler(async () => (await admin.api()).router));
        app.use(
          '/console',
          lazyHandler(async () => {
            // The console's next requests go to the admin API: build it while the log-in page is read.
            admin.api().catch(() => undefined);
            return (await import('./admin/console/console-router.js')).createConsoleRouter({ sessions: consoleSessions, adminToken: admin.token.token, limiter: authLimiter });
          }),
        );
      },
    });
    delivery = side ?? (inThread ? await DeliveryThread.start({ config, env, rules, logger, ...deliveryHooks, onRestart: () => metrics?.recordDeliveryThreadRestart() }) : null);
  } catch (err) {
    await server?.close();
    await health.stop();
    await admin.jobs.stop();
    await node.stop();
    rules.close();
    await dispatcher.close();
    await store.close();
    throw err;
  }
  node.start();
  // The store's signal is the one wake-up. The thread reads through a connection of its own, so this
  // process's commits (ingest, replays, retries) reach it here; other nodes' through its own LISTEN.
  if (inThread) store.onDeliveriesDue(() => delivery?.wake());
  await side?.start();
  consoleBase ??= server.adminUrl;
  retention?.start();
  schemaLearner?.start();
  alerts?.start();
  if (config.admin.port === undefined && !isLoopbackHost(config.host)) {
    logger.warn(
      { host: config.host },
      `the admin API, console and metrics share the webhook listener on ${config.host}: anyone who can reach it can try the admin token; set HOOKRELAY_ADMIN_PORT to serve them on a loopback listener of their own`,
    );
  }
  const metricsHost = config.admin.port === undefined ? config.host : config.admin.host;
  if (metrics && config.metrics.token === undefined && !isLoopbackHost(metricsHost)) {
    logger.warn(
      { host: metricsHost },
      `/metrics answers without a token on ${metricsHost}: anyone who can reach it reads the sources, event names and rule ids it reports; set HOOKRELAY_METRICS_TOKEN (metrics.token), or serve the admin surface on loopback with HOOKRELAY_ADMIN_PORT`,
    );
  }
  started = true;

  let closing: Promise<void> | undefined;
  return {
    url: server.url,
    port: server.port,
    adminUrl: server.adminUrl,
    store,
    rules,
    worker: delivery,
    metrics,
    bodyBudget,
    retention,
    schemaLearner,
    outages,
    alerts,
    sources,
    generatedSecrets: generated,
    node,
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
        await health.stop();
        await delivery?.stop(config.server.shutdownGraceMs);
        alerts?.stop();
        await retention?.stop();
        await schemaLearner?.stop();
        await admin.jobs.stop();
        // Last, so its jobs are marked failed (shutdown) before the node leaves the registry.
        await node.stop();
        rules.close();
        contracts.close();
        await dispatcher.close();
        await store.close();
      })()),
  };
}
