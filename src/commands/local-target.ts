import type { OperationsContext } from '../operations/context.js';
import { eventWithDeliveries, listDeliveriesPage, listEventsPage, retryDelivery } from '../operations/browse.js';
import { editTargetOf, replayEdited } from '../operations/edited-replay.js';
import { clusterView } from '../operations/cluster.js';
import { exportEvents } from '../operations/export-events.js';
import { checkReplayRule, planReplay, planRetry } from '../operations/jobs/bulk-plans.js';
import { runReplayJob, type BatchLoop, type BatchLoopResult } from '../operations/jobs/replay-job.js';
import { runRetryJob } from '../operations/jobs/retry-job.js';
import type { WaitSources } from '../operations/delivery-wait.js';
import { DEFAULT_ROUTE_MODE, ReplayRouter } from '../operations/replay-routing.js';
import { resendEvent } from '../operations/resend-event.js';
import { replayWithRouting } from '../operations/routed-replay.js';
import { editedReplayView, eventDetailView, replayResultView } from '../operations/views.js';
import { deliveryPauses, NO_PAUSES, type DeliveryPauses } from '../delivery/delivery-pauses.js';
import type { Config } from '../config.js';
import { createGuardedDispatcher } from '../delivery/guarded-dispatcher.js';
import { destinationCheck } from '../delivery/destination-check.js';
import { createSsrfGuard } from '../delivery/ssrf-guard.js';
import { invalidContractsError, loadContracts } from '../contracts/contract-files.js';
import { releaseQuarantined } from '../operations/release-event.js';
import { HookrelayError } from '../errors.js';
import { createLogger } from '../log.js';
import { explainStoredEvent, type EventExplanation, type ExplainRequest } from '../operations/explain-event.js';
import { keptRuleSetOf } from '../rules/kept-rules.js';
import { loadRuleSet } from '../rules/loader.js';
import { formatRuleFileError } from '../rules/rule-file-error.js';
import type { CheckDestination } from '../rules/explain.js';
import type { RuleSet } from '../rules/types.js';
import type { BulkDeliveryFilter } from '../store/bulk-store.js';
import type { ImportedEvent, ImportResult } from '../store/event-archive.js';
import type { Store } from '../store/store.js';
import { describeStore, storeIdentityOf } from '../runtime/store-identity.js';
import { openCommandStore } from './command-store.js';
import { configureTransformSandbox } from '../rules/transform-sandbox.js';
import type { ImportPolicy } from '../operations/import-record.js';
import type {
  AdminTarget, ReleaseResultView, BulkControl, ClusterView, BulkResult, DeliveryQuery, DeliveryView, EventExport, EventListItemView, EventQuery, EventWithDeliveries, Paged,
  BulkReplayOptions, EditedReplayOptions, EditedReplayResultView, ReplayResultView, ResendResult, ResendSigning, RetryQuery, RoutedReplayRequest,
} from './admin-target.js';

/** An interrupted run says where to carry on: after the last id of its last whole batch. */
function bulkResult({ progress, stopped, lastId }: BatchLoopResult): BulkResult {
  if (!stopped) return { ...progress, state: 'done', error: null };
  return { ...progress, state: 'cancelled', error: null, ...(lastId !== undefined && { resumeAfterId: lastId }) };
}

/** The rules in the rules dir, as `serve` would load them; invalid ones are an error listing every problem. */
export async function loadCurrentRules(config: Readonly<Config>, env: Record<string, string | undefined>): Promise<RuleSet> {
  // Explain and dry runs render transforms under the server's limits.
  configureTransformSandbox(config.rules.transform);
  const result = await loadRuleSet(config.rulesDir, env, config.rulesMaxFileBytes);
  if (!result.ok) throw new HookrelayError('invalid_rules', `The rules in ${config.rulesDir} are invalid:\n  ${result.errors.map(formatRuleFileError).join('\n  ')}`);
  return result.ruleSet;
}

/** The guard the server would use (same allowed networks), resolving names as the worker would. */
export function localDestinationCheck(config: Readonly<Config>): CheckDestination {
  return destinationCheck(createSsrfGuard({ allowNetworks: config.delivery.allowNetworks }), { resolveNames: true });
}

/**
 * The store `serve` would use from this configuration, opened directly when no server runs for it (SQLite
 * or PostgreSQL alike). A server that starts meanwhile is safe beside it: SQLite in WAL mode lets readers run
 * during its commits and writes here wait (busy timeout) for its short transactions; a worker picks up the
 * outbox rows written here at its next poll. Replay, resend, views and cursors are the admin API's own code
 * (src/operations/), so both modes behave and print alike.
 */
export class LocalTarget implements AdminTarget {
  readonly mode = 'local';
  private ruleSet: RuleSet | null = null;

  private constructor(
    private readonly store: Store,
    private readonly config: Readonly<Config>,
    private readonly env: Record<string, string | undefined>,
  ) {}

  /** `create: false` refuses a data dir without a database rather than creating an empty one. */
  static async open(config: Readonly<Config>, env: Record<string, string | undefined>, options: { create?: boolean } = {}): Promise<LocalTarget> {
    const store = await openCommandStore(config, options);
    if (!store) {
      throw new HookrelayError('not_found', `No hookrelay database in ${config.dataDir} (${describeStore(storeIdentityOf(config))} does not exist). Pass --data-dir <dir> (or set HOOKRELAY_DATABASE_URL) as serve has them, or --url to use a running server's admin API.`);
    }
    return new LocalTarget(store, config, env);
  }

  /** The current rules, as `serve` would load them from the rules dir. */
  private async rules(): Promise<RuleSet> {
    this.ruleSet ??= await loadCurrentRules(this.config, this.env);
    return this.ruleSet;
  }

  /** The current rules, kept in the store like a server's: the deliveries planned here are sent by a server with this rule version. */
  private async plannedRules(): Promise<RuleSet> {
    const ruleSet = await this.rules();
    await this.store.saveRuleSet(keptRuleSetOf(ruleSet));
    return ruleSet;
  }

  /** Why deliveries are paused under the rules `serve` would load; none known when they cannot be read. */
  private async pauses(): Promise<DeliveryPauses> {
    try {
      return deliveryPauses(await this.rules());
    } catch {
      return NO_PAUSES;
    }
  }

  /** Why pending deliveries wait, from the store and the rules; a server's circuits and limits are its own (in memory), unknown here. */
  private async waitSources(): Promise<WaitSources> {
    const rules = await this.rules().catch(() => null);
    return { store: this.store, rules, destinations: null, nodeId: null, now: Date.now() };
  }

  /** What the admin API's functions need; the worker is another process (it polls), so there is none to wake. */
  private context(ruleSet: RuleSet | null, dispatcher: OperationsContext['dispatcher'] | null): OperationsContext {
    const unavailable = (): never => {
      throw new Error('not available in this command');
    };
    return {
      store: this.store,
      rules: { current: () => ruleSet ?? unavailable(), status: unavailable },
      get dispatcher() {
        return dispatcher ?? unavailable();
      },
      get guard() {
        return unavailable();
      },
      sources: new Map(this.config.sources.map((s) => [s.name, s])),
      maxDepth: this.config.maxDepth,
      logger: createLogger('silent'),
      now: Date.now,
      env: this.env,
    };
  }

  listEvents(query: EventQuery, page: { limit: number; cursor?: string }): Promise<Paged<EventListItemView>> {
    return listEventsPage(this.store, query, page);
  }

  async getEvent(id: number): Promise<EventWithDeliveries> {
    return eventWithDeliveries(this.store, id, await this.pauses(), await this.waitSources());
  }

  async releaseEvent(id: number, request: { force?: boolean; by: string }): Promise<ReleaseResultView> {
    const ruleSet = await this.plannedRules();
    const load = await loadContracts(this.config.contracts.dir!);
    if (!load.ok) throw invalidContractsError(load.errors);
    // Assigned, not spread: the context's unavailable parts are getters that throw when read.
    const answer = await releaseQuarantined(Object.assign(this.context(ruleSet, null), { contracts: () => load.contracts }), id, request);
    return { event: eventDetailView(answer.event), deliveryIds: answer.deliveryIds };
  }

  async replayEvent(id: number, request: RoutedReplayRequest): Promise<ReplayResultView> {
    const ruleSet = await this.plannedRules();
    return replayResultView(await replayWithRouting(this.context(ruleSet, null), id, request), deliveryPauses(ruleSet));
  }

  async replayEvents(query: EventQuery & { afterId?: number }, options: BulkReplayOptions, control: BulkControl): Promise<BulkResult> {
    const ruleSet = await this.plannedRules();
    const route = options.route ?? DEFAULT_ROUTE_MODE;
    const ruleId = options.ruleId ?? null;
    checkReplayRule(ruleSet, route, ruleId);
    const { afterId, ...selection } = query;
    const plan = await planReplay(this.store, new ReplayRouter(this.store, this.env, () => ruleSet), { selection, ruleId, route, dryRun: options.dryRun ?? false, afterId });
    control.onProgress({ total: plan.total, processed: 0, created: 0, failed: 0 });
    // The admin API's replay job, batch for batch: one transaction each, so Ctrl-C leaves whole batches.
    return { ...bulkResult(await runReplayJob(this.batchLoop(control), plan)), summary: plan.planner.summary() };
  }

  async replayEdited(id: number, request: EditedReplayOptions): Promise<EditedReplayResultView> {
    const target = editTargetOf(request);
    const ruleSet = await this.plannedRules();
    const answer = await replayEdited(this.context(ruleSet, null), id, { body: Buffer.from(request.body, 'utf8'), meantInvalid: request.meantInvalid, target, via: 'cli' });
    return editedReplayView(answer, deliveryPauses(ruleSet));
  }

  async explainEvent(id: number, request: ExplainRequest): Promise<EventExplanation> {
    return explainStoredEvent(this.store, { ruleSet: await this.rules(), checkDestination: localDestinationCheck(this.config) }, id, request);
  }

  async resendEvent(id: number, url: string, signing: ResendSigning): Promise<ResendResult> {
    const dispatcher = createGuardedDispatcher({ guard: createSsrfGuard({ allowNetworks: this.config.delivery.allowNetworks }) });
    try {
      return await resendEvent(this.context(null, () => Promise.resolve(dispatcher)), id, { url, signing });
    } finally {
      await dispatcher.close();
    }
  }

  async exportEvents(query: EventQuery): Promise<EventExport> {
    return exportEvents(this.store, query);
  }

  /** Local mode only: the admin API has no import endpoint. */
  async importEvents(events: ImportedEvent[]): Promise<ImportResult> {
    return this.store.importEvents(events);
  }

  /** What an import into this data dir holds its lines to: this instance's body limit and sources. */
  importPolicy(): ImportPolicy {
    return { maxBody: this.config.maxBody, maxDepth: this.config.maxDepth, sources: new Set(this.config.sources.map((s) => s.name)) };
  }

  async listDeliveries(query: DeliveryQuery, page: { limit: number; cursor?: string }): Promise<Paged<DeliveryView>> {
    return listDeliveriesPage(this.store, query, page, await this.pauses(), await this.waitSources());
  }

  async retryDelivery(id: number): Promise<DeliveryView> {
    return retryDelivery(this.context(await this.rules(), null), id, await this.pauses());
  }

  async retryDeliveries(query: RetryQuery & { afterId?: number }, control: BulkControl): Promise<BulkResult> {
    const { ruleId, eventId, afterId, deliveryState: _deliveryState, ...eventQuery } = query;
    const filter: BulkDeliveryFilter = { ...eventQuery, ruleId, eventId, afterId };
    const { retryable, total, summary } = await planRetry(this.store, filter, await this.rules());
    control.onProgress({ total, processed: 0, created: 0, failed: 0 });
    return bulkResult(await runRetryJob(this.batchLoop(control), retryable, total, summary));
  }

  /** The admin jobs' batch loop driven from the terminal: Ctrl-C stops it between batches; a running server's worker polls for the new rows. */
  private batchLoop(control: BulkControl): BatchLoop {
    return { store: this.store, shouldStop: () => control.signal.aborted, onProgress: async (progress) => control.onProgress(progress) };
  }

  /** Local mode is no node: the list has the server(s) that registered in this data dir. */
  cluster(): Promise<ClusterView> {
    return clusterView(this.store, null);
  }

  async close(): Promise<void> {
    await this.store.close();
  }
}
