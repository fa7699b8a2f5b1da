import type { Logger } from 'pino';
import { startAdminApi } from './admin/api/start-admin-api.js';
import type { JobRunner } from './operations/jobs/job-runner.js';
import type { StreamHub } from './admin/api/stream/stream-hub.js';
import { ConsoleSessions } from './admin/console/console-sessions.js';
import { FailedAuthLimiter } from './admin/failed-auth-limiter.js';
import { nodeRoleOf, type Config, type SourceConfig } from './config.js';
import { NodeHeartbeat } from './cluster/node-heartbeat.js';
import { notAReceiverHandler } from './ingest/not-a-receiver.js';
import { createAlertSender } from './alerts/alert-sender.js';
import { Alerts } from './alerts/alerts.js';
import type { OutageTracker } from './delivery/outage-tracker.js';
import type { DeliveryRunner } from './delivery/delivery-side.js';
import { lazyGuardedDispatcher, type LazyDispatcher } from './delivery/lazy-dispatcher.js';
import { createSsrfGuard, type LookupFunction, type SsrfGuard } from './delivery/ssrf-guard.js';
import { refusedDestinationWarnings } from './delivery/destination-warnings.js';
import { DeliveryThread } from './delivery/thread/delivery-thread.js';
import { OnDemandThread } from './delivery/thread/on-demand-thread.js';
import type { AttemptNote } from './delivery/thread/messages.js';
import { BodyBudget } from './ingest/body-budget.js';
import { KNOWN_EVENT_SCHEMAS } from './ingest/event-schemas.js';
import { createIngestHandler } from './ingest/ingest-handler.js';
import { lazyHandler } from './http/lazy-handler.js';
import { HookrelayMetrics } from './metrics/hookrelay-metrics.js';
import { mountMetricsRoute } from './metrics/metrics-route.js';
import { RetentionPruner } from './retention/retention-pruner.js';
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
import { isLoopbackHost, startServer, type ReadinessReport, type RunningServer } from './http/server.js';
import { ensureAdminToken, type AdminToken } from './identity/admin-token.js';
import { ensureSourceSecrets, type GeneratedSecret } from './identity/source-secrets.js';
import { openStore } from './store/open-store.js';
import { secretOrigins } from './runtime/setting-origins.js';
import { ownRuntimeRecord } from './runtime/runtime-file.js';
import { configureTransformSandbox } from './rules/transform-sandbox.js';
import { CommitHealth } from './http/readiness.js';
import { retryWhileStoreUnavailable } from './start/startup-retry.js';
import type { Outage } from './store/outage-store.js';
import type { Store } from './store/store.js';
import { StopList } from './start/stop-list.js';
import type { Express } from 'express';

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
  delivery: DeliveryRunner | null;
  /** Null when `metrics.enabled` is false. */
  metrics: HookrelayMetrics | null;
  /** Bytes of webhook bodies held now, over every request (`server.maxBufferedBytes`). */
  bodyBudget: BodyBudget;
  /** Null when `retention.enabled` is false. */
  retention: RetentionPruner | null;
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

/** Beyond the shutdown grace (which bounds the server's close and the delivery drain), how long one part may take to stop. */
const STOP_MARGIN_MS = 5_000;

type Startup = Parameters<typeof retryWhileStoreUnavailable>[2];
type Env = Record<string, string | undefined>;

/**
 * The composition root: config in, a running receiver and delivery loop out. The CLI and the tests start it
 * this way. Each part is built after the parts it uses and registers how it stops; a failed start, like
 * `close`, stops what was built in reverse.
 */
export async function startHookrelay(config: Readonly<Config>, logger: Logger, options: StartOptions = {}): Promise<RunningHookrelay> {
  const stops = new StopList({ logger, timeoutMs: config.server.shutdownGraceMs + STOP_MARGIN_MS });
  try {
    return await startParts(config, logger, options, stops);
  } catch (err) {
    await stops.stop();
    throw err;
  }
}

async function startParts(config: Readonly<Config>, logger: Logger, options: StartOptions, stops: StopList): Promise<RunningHookrelay> {
  const env = options.env ?? {};
  const role = nodeRoleOf(config);
  if (role !== 'receiver' && config.delivery.thread && options.lookup) throw new Error('options.lookup applies to the delivery loop on the event loop: set delivery.thread to false');
  // Explain, dry runs and replay previews render here; deliveries render in the delivery thread's own sandbox.
  configureTransformSandbox(config.rules.transform);
  if (config.delivery.enabled === false) logger.warn('delivery.enabled is deprecated: set role: receiver (HOOKRELAY_ROLE=receiver, --role receiver) instead; this node runs role receiver');
  // A database that is starting, restarting or out of reach is waited for, up to database.startupTimeoutMs.
  const startup: Startup = { timeoutMs: config.database.startupTimeoutMs, logger };
  // Set once every part has started: until then /readyz says not ready, though the server already listens.
  let started = false;

  const store = await retryWhileStoreUnavailable('open the store', () => openStore(config, logger), startup);
  stops.add('store', () => store.close());
  const identity = await loadIdentity(config, store, startup, logger);
  const guard = createSsrfGuard({ allowNetworks: config.delivery.allowNetworks, lookup: options.lookup });
  const dispatcher = lazyGuardedDispatcher(guard);
  stops.add('outgoing connections', () => dispatcher.close());
  const contracts = await ContractWatcher.start(config.contracts.dir!, logger);
  stops.add('contract watcher', () => contracts.close());
  const rules = await watchRules(config, { env, store, startup, logger, isStarted: () => started });
  stops.add('rule watcher', () => rules.close());
  warnAboutRefusedDestinations(rules, guard, logger);

  const alerts = createAlerts(config, store, dispatcher, logger);
  if (alerts) stops.add('alerts', () => alerts.stop());
  const bodyBudget = new BodyBudget(config.server.maxBufferedBytes);
  const metrics = createMetrics(config, store, rules, identity.sources, bodyBudget);
  const registration = { store, role, heartbeatMs: config.cluster.heartbeatMs, ruleSetHash: () => rules.current().hash, logger };
  const node = await retryWhileStoreUnavailable('register this node', () => NodeHeartbeat.register(registration), startup);
  // After the admin API's jobs, so they are marked failed (shutdown) before the node leaves the registry.
  stops.add('node registration', () => node.stop());

  // Drift alerts link to the console at publicUrl, else where the admin surface listens (known once it does).
  const consoleLink = { base: config.publicUrl ?? null };
  const schemaLearner = config.schema.enabled
    ? new SchemaLearner({ store, settings: config.schema, logger, leaseHolder: node.id, onDrifts: driftAnnouncer({ rules, metrics, alerts, logger, consoleLink }) })
    : null;
  if (schemaLearner) stops.add('schema learner', () => schemaLearner.stop());
  const retention = config.retention.enabled
    ? new RetentionPruner({ store, settings: config.retention, logger, leaseHolder: node.id, onPass: metrics ? (report) => metrics.recordPrune(report) : undefined })
    : null;
  if (retention) stops.add('retention', () => retention.stop());
  // Built now, started once the server listens; stopped after the server, so in-flight attempts finish.
  const { runner: delivery, outages } = await prepareDelivery(config, role, { store, rules, env, logger, lookup: options.lookup, metrics, alerts });
  if (delivery) stops.add('delivery', () => delivery.stop(config.server.shutdownGraceMs));
  if (delivery && metrics) metrics.readDestinationsFrom(async () => (await delivery.destinations()).destinations);

  const health = new CommitHealth({ probe: () => store.checkWritable(), intervalMs: READINESS_PROBE_MS, deadlineMs: config.database.commitTimeoutMs, logger });
  const readiness = async (): Promise<ReadinessReport> => {
    const status = rules.status();
    const rulesCheck = { hash: status.hash, ruleCount: status.ruleCount, loadedAt: status.loadedAt.toISOString(), lastError: status.lastError };
    // A worker is healthy (/healthz) but not ready for webhooks: load balancers that check /readyz skip it.
    const roleCheck = role === 'worker' ? 'worker: receives no webhooks' : role;
    // Reported once started, never a reason to refuse webhooks: the node stores them while the delivery thread restarts.
    const deliveryCheck = delivery && started ? { delivery: delivery.state } : {};
    // Answered from what the node knows now (commit outcomes, the probe): never a wait on the database.
    const storeCheck = health.status;
    return {
      ready: started && role !== 'worker' && storeCheck === 'ok',
      checks: { startup: started ? 'complete' : 'starting', store: storeCheck, rules: rulesCheck, role: roleCheck, ...deliveryCheck },
    };
  };
  const ingest = role === 'worker' ? notAReceiverHandler() : createIngest(config, { env, store, rules, contracts, sources: identity.sources, bodyBudget, health, metrics, logger });
  const consoleSessions = new ConsoleSessions({ store, publicUrl: config.publicUrl });
  const authLimiter = new FailedAuthLimiter(config.admin.authFailures);
  const admin = await startAdminApi({
    token: identity.adminToken,
    store,
    rules,
    dispatcher: dispatcher.get,
    guard,
    sources: identity.sources,
    logger,
    sessions: consoleSessions,
    limiter: authLimiter,
    streams: config.admin.streams,
    maxDepth: config.maxDepth,
    env,
    node: node.node,
    readiness,
    contracts: () => contracts.current(),
    runtime: () => ownRuntimeRecord(config.dataDir),
    ...(delivery && { destinations: () => delivery.destinations() }),
  });
  stops.add('admin jobs', () => admin.jobs.stop());
  node.onBeat(() => admin.jobs.failOrphanedJobs());
  // The cluster view shows a rule edit at once, not at the next heartbeat.
  rules.on('reload', () => void node.beat());

  health.start();
  stops.add('readiness probe', () => health.stop());
  const server = await startServer({
    config,
    logger,
    ingest,
    readiness,
    ...(metrics && { onConnectionDropped: () => metrics.recordConnectionDropped() }),
    mountAdmin: (app) => mountAdminSurface(app, { config, metrics, admin, consoleSessions, authLimiter }),
  });
  stops.add('server', () => server.close());
  // Streams never finish on their own: they end first, so the server's close does not wait for them.
  stops.add('event streams', () => admin.streams.close());
  consoleLink.base ??= server.adminUrl;

  await delivery?.start();
  // The store's signal is the one wake-up. The thread reads through a connection of its own, so this
  // process's commits (ingest, replays, retries) reach it here; other nodes' through LISTEN (this store's,
  // which also starts an idle thread, and the thread's own once it runs).
  if (delivery instanceof OnDemandThread) store.onDeliveriesDue(() => delivery.wake());
  node.start();
  retention?.start();
  schemaLearner?.start();
  alerts?.start();
  warnAboutExposure(config, metrics !== null, logger);
  started = true;

  let closing: Promise<void> | undefined;
  return {
    url: server.url,
    port: server.port,
    adminUrl: server.adminUrl,
    store,
    rules,
    delivery,
    metrics,
    bodyBudget,
    retention,
    schemaLearner,
    outages,
    alerts,
    sources: identity.sources,
    generatedSecrets: identity.generated,
    node,
    adminToken: admin.token.token,
    generatedAdminToken: admin.token.generated,
    adminJobs: admin.jobs,
    eventStreams: admin.streams,
    server,
    close: () =>
      (closing ??= stops.stop().then((failed) => {
        if (failed.length > 0) throw new Error(`shutdown failed: ${failed.join(', ')} did not stop cleanly`);
      })),
  };
}

/** The instance's generated values (source secrets, admin token): kept in the store, so every node sharing it uses the same ones. */
async function loadIdentity(config: Readonly<Config>, store: Store, startup: Startup, logger: Logger): Promise<{ sources: SourceConfig[]; generated: GeneratedSecret[]; adminToken: AdminToken }> {
  const storage = { store, dataDir: config.dataDir, fileCopies: config.database.url === undefined, logger };
  const { sources, generated } = await retryWhileStoreUnavailable('keep the source secrets', () => ensureSourceSecrets(config.sources, storage), startup);
  const adminToken = await retryWhileStoreUnavailable('keep the admin token', () => ensureAdminToken(config.admin.token, storage), startup);
  for (const source of sources) {
    if (source.scheme === 'none') {
      logger.warn({ source: source.name }, `SIGNATURE CHECKS ARE OFF for source "${source.name}" (scheme: none): anyone who can reach this port can store events`);
    }
  }
  return { sources, generated, adminToken };
}

/**
 * The rule files, watched. A rule set is used only once kept: any node can then send a delivery with the
 * version it was planned with. At start the database may still be out of reach (waited for); a reload later
 * reports a failure and keeps the last set.
 */
function watchRules(config: Readonly<Config>, deps: { env: Env; store: Store; startup: Startup; logger: Logger; isStarted: () => boolean }): Promise<RuleSetWatcher> {
  const { store, startup } = deps;
  const keep = (ruleSet: RuleSet): Promise<void> => store.saveRuleSet(keptRuleSetOf(ruleSet));
  return RuleSetWatcher.start({
    dir: config.rulesDir,
    limits: { ...RULE_FILE_LIMITS, maxFileBytes: config.rulesMaxFileBytes },
    env: deps.env,
    logger: deps.logger,
    keep: (ruleSet) => (deps.isStarted() ? keep(ruleSet) : retryWhileStoreUnavailable('keep the rule set', () => keep(ruleSet), startup)),
  });
}

/** Says which rule destinations the SSRF guard will refuse, at start and after each reload. */
function warnAboutRefusedDestinations(rules: RuleSetWatcher, guard: SsrfGuard, logger: Logger): void {
  const warn = (): void => {
    for (const warning of refusedDestinationWarnings(rules.current(), guard)) logger.warn(warning);
  };
  warn();
  rules.on('reload', warn);
}

function createAlerts(config: Readonly<Config>, store: Store, dispatcher: LazyDispatcher, logger: Logger): Alerts | null {
  if (!config.alerts.url) return null;
  return new Alerts({
    send: createAlertSender({ url: config.alerts.url, secret: config.alerts.secret, dispatcher: dispatcher.get, logger }),
    store,
    logger,
    dampingMs: config.alerts.dampingMs,
    deadLetterThreshold: config.alerts.deadLetterThreshold,
    checkIntervalMs: config.alerts.checkIntervalMs,
  });
}

function createMetrics(config: Readonly<Config>, store: Store, rules: RuleSetWatcher, sources: readonly SourceConfig[], bodyBudget: BodyBudget): HookrelayMetrics | null {
  if (!config.metrics.enabled) return null;
  const metrics = new HookrelayMetrics({
    sources: sources.map((s) => s.name),
    knownEvents: Object.keys(KNOWN_EVENT_SCHEMAS),
    maxEventLabels: config.metrics.maxEventLabels,
    outboxStats: () => store.outboxStats(),
    deadLettersByRule: async () => {
      const counts = await store.deliveryCountsByRule(rules.current().rules.map((rule) => rule.id));
      return new Map([...counts].map(([rule, c]) => [rule, c.dead]));
    },
    failingDestinations: async () => (await store.listOutages({ open: true, limit: 1000 })).map((outage) => outage.destination),
    blockedKeyCounts: () => store.blockedKeyCounts(),
    orderedRules: () => rules.current().rules.filter((rule) => rule.order).map((rule) => rule.id),
    bufferedBytes: () => bodyBudget.bufferedBytes,
    heldEvents: (limit) => store.countHeldEvents(limit),
  });
  rules.on('reload', () => metrics.recordRulesReload());
  rules.on('error', () => metrics.recordRulesReloadError());
  return metrics;
}

/** Logs, counts and alerts each recorded drift, naming the rules that read the fields it touches. */
function driftAnnouncer(deps: { rules: RuleSetWatcher; metrics: HookrelayMetrics | null; alerts: Alerts | null; logger: Logger; consoleLink: { base: string | null } }): (drifts: StoredDrift[]) => void {
  const { rules, metrics, alerts, logger, consoleLink } = deps;
  return (drifts) => {
    const described = rules.current().rules.map((rule) => rule.describe());
    for (const drift of drifts) {
      metrics?.recordSchemaDrift(drift);
      const text = describeDrift(drift) + describeRulesTouched(rulesTouchedBy(drift, described));
      logger.warn({ drift }, `schema drift: ${text}`);
      const base = consoleLink.base;
      alerts?.schemaDrift(drift, text, base ? `${base.replace(/\/$/, '')}/console#/events/${drift.eventId}` : null);
    }
  };
}

/**
 * The delivery side of a node that delivers, built but not started: in the delivery thread (started once there
 * is something to deliver), or on this event loop with `delivery.thread: false` (its modules, undici among
 * them, load only then).
 */
async function prepareDelivery(
  config: Readonly<Config>,
  role: Config['role'],
  deps: { store: Store; rules: RuleSetWatcher; env: Env; logger: Logger; lookup?: LookupFunction; metrics: HookrelayMetrics | null; alerts: Alerts | null },
): Promise<{ runner: DeliveryRunner | null; outages: OutageTracker | null }> {
  if (role === 'receiver') return { runner: null, outages: null };
  const { store, rules, env, logger, metrics, alerts } = deps;
  const hooks = {
    onAttempt: metrics ? (attempt: AttemptNote) => metrics.recordAttempt(attempt) : undefined,
    onOutageOpened: alerts ? (outage: Outage) => alerts.outageOpened(outage) : undefined,
    onOutageClosed: alerts ? (outage: Outage) => alerts.outageClosed(outage) : undefined,
  };
  if (config.delivery.thread) {
    const thread = new DeliveryThread({ config, env, rules, logger, ...hooks, onRestart: () => metrics?.recordDeliveryThreadRestart() });
    return { runner: new OnDemandThread(thread, { store, pollIntervalMs: config.delivery.pollIntervalMs, logger }), outages: null };
  }
  const side = (await import('./delivery/delivery-side.js')).createDeliverySide({ config, store, rules: () => rules.current(), env, logger, lookup: deps.lookup, ...hooks });
  return { runner: side, outages: side.outages };
}

function createIngest(
  config: Readonly<Config>,
  deps: { env: Env; store: Store; rules: RuleSetWatcher; contracts: ContractWatcher; sources: readonly SourceConfig[]; bodyBudget: BodyBudget; health: CommitHealth; metrics: HookrelayMetrics | null; logger: Logger },
): ReturnType<typeof createIngestHandler> {
  const { rules, contracts, health, metrics } = deps;
  return createIngestHandler({
    sources: new Map(deps.sources.map((s) => [s.name, s])),
    store: deps.store,
    maxBody: config.maxBody,
    budget: deps.bodyBudget,
    maxDepth: config.maxDepth,
    logger: deps.logger,
    logRequests: config.logRequests,
    routeEvent: async (input) => {
      const ruleSet = rules.current();
      return { ruleSetHash: ruleSet.hash, deliveries: await planDeliveries(ruleSet, input) };
    },
    contracts: () => contracts.current(),
    secretOrigins: secretOrigins(config, deps.env),
    onOutcome: (outcome) => {
      if (outcome.code === 'store_unavailable') health.failed('webhook commits fail (store_unavailable)');
      else if (outcome.status === 200) health.succeeded();
      metrics?.recordIngest(outcome);
    },
  });
}

/** Metrics, the admin API and the console on the admin listener (or the webhook listener without `admin.port`). */
function mountAdminSurface(
  app: Express,
  deps: { config: Readonly<Config>; metrics: HookrelayMetrics | null; admin: Awaited<ReturnType<typeof startAdminApi>>; consoleSessions: ConsoleSessions; authLimiter: FailedAuthLimiter },
): void {
  const { config, metrics, admin, consoleSessions, authLimiter } = deps;
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
}

/** Warns when the admin surface or unauthenticated metrics listen beyond loopback. */
function warnAboutExposure(config: Readonly<Config>, metricsOn: boolean, logger: Logger): void {
  if (config.admin.port === undefined && !isLoopbackHost(config.host)) {
    logger.warn(
      { host: config.host },
      `the admin API, console and metrics share the webhook listener on ${config.host}: anyone who can reach it can try the admin token; set HOOKRELAY_ADMIN_PORT to serve them on a loopback listener of their own`,
    );
  }
  const metricsHost = config.admin.port === undefined ? config.host : config.admin.host;
  if (metricsOn && config.metrics.token === undefined && !isLoopbackHost(metricsHost)) {
    logger.warn(
      { host: metricsHost },
      `/metrics answers without a token on ${metricsHost}: anyone who can reach it reads the sources, event names and rule ids it reports; set HOOKRELAY_METRICS_TOKEN (metrics.token), or serve the admin surface on loopback with HOOKRELAY_ADMIN_PORT`,
    );
  }
}
