import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { AdminContext } from '../admin/api/context.js';
import { decodeDeliveryCursor, decodeEventCursor, encodeDeliveryCursor, encodeEventCursor } from '../admin/api/cursor.js';
import { JOB_BATCH_SIZE, startingAfterId, yieldToEventLoop } from '../admin/api/jobs/batches.js';
import { runReplayJob, type BatchLoop, type BatchLoopResult } from '../admin/api/jobs/replay-job.js';
import { runRetryJob } from '../admin/api/jobs/retry-job.js';
import { resendEvent } from '../admin/api/resend-event.js';
import { deliveryDetailView, deliveryView, editedReplayView, eventDetailView, eventSummaryView, replayResultView } from '../admin/api/views.js';
import { editTargetOf, replayEdited } from '../operations/edited-replay.js';
import { BulkReplayPlanner } from '../operations/bulk-replay-plan.js';
import { DEFAULT_ROUTE_MODE, ReplayRouter } from '../operations/replay-routing.js';
import { replayWithRouting } from '../operations/routed-replay.js';
import type { Config } from '../config.js';
import { createGuardedDispatcher } from '../delivery/guarded-dispatcher.js';
import { createSsrfGuard } from '../delivery/ssrf-guard.js';
import { HookrelayError } from '../errors.js';
import { createLogger } from '../log.js';
import { keptRuleSetOf } from '../rules/kept-rules.js';
import { loadRuleSet } from '../rules/loader.js';
import { formatRuleFileError } from '../rules/rule-file-error.js';
import type { RuleSet } from '../rules/types.js';
import { DATABASE_FILE, SqliteStore } from '../store/sqlite/sqlite-store.js';
import type { BulkDeliveryFilter, EventSelection, ImportedEvent, ImportResult } from '../store/store.js';
import type {
  AdminBackend, BulkControl, BulkResult, DeliveryQuery, DeliveryView, EventExport, EventQuery, EventSummaryView, EventWithDeliveries, Paged,
  BulkReplayOptions, EditedReplayOptions, EditedReplayResultView, ReplayResultView, ResendResult, ResendSigning, RetryQuery, RoutedReplayRequest,
} from './admin-backend.js';
import { recordFromStored, type ExportRecord } from './ndjson-format.js';

/** A running server holds the write lock only for short commits; wait this long for it. */
const BUSY_TIMEOUT_MS = 5_000;

/** An interrupted run says where to carry on: after the last id of its last whole batch. */
function bulkResult({ progress, stopped, lastId }: BatchLoopResult): BulkResult {
  if (!stopped) return { ...progress, state: 'done', error: null };
  return { ...progress, state: 'cancelled', error: null, ...(lastId !== undefined && { resumeAfterId: lastId }) };
}

export function selectionOf(query: EventQuery & { afterId?: number }): EventSelection {
  return query;
}

/**
 * The data dir opened directly. Safe beside a running server: SQLite in WAL mode lets readers run during
 * its commits, and writes here wait (busy timeout) for its short transactions. The server's worker picks
 * up outbox rows written here at its next poll. Replay, resend, views and cursors are the admin API's own
 * code, so both modes behave and print alike.
 */
export class LocalBackend implements AdminBackend {
  readonly mode = 'local';
  private ruleSet: RuleSet | null = null;

  private constructor(
    private readonly store: SqliteStore,
    private readonly config: Readonly<Config>,
    private readonly env: Record<string, string | undefined>,
  ) {}

  /** `create: false` refuses a data dir without a database rather than creating an empty one. */
  static open(config: Readonly<Config>, env: Record<string, string | undefined>, options: { create?: boolean } = {}): LocalBackend {
    if (!options.create && !existsSync(join(config.dataDir, DATABASE_FILE))) {
      throw new HookrelayError('not_found', `No hookrelay database in ${config.dataDir}. Pass --data-dir <dir>, or --url to use a running server's admin API.`);
    }
    return new LocalBackend(new SqliteStore({ dataDir: config.dataDir, durability: 'normal', busyTimeoutMs: BUSY_TIMEOUT_MS }), config, env);
  }

  /** The current rules, as `serve` would load them from the rules dir. */
  private async rules(): Promise<RuleSet> {
    if (this.ruleSet) return this.ruleSet;
    const result = await loadRuleSet(this.config.rulesDir, this.env);
    if (!result.ok) throw new HookrelayError('invalid_rules', `The rules in ${this.config.rulesDir} are invalid:\n  ${result.errors.map(formatRuleFileError).join('\n  ')}`);
    // Kept like a server's: the deliveries planned here are sent by a server with this rule version.
    await this.store.saveRuleSet(keptRuleSetOf(result.ruleSet));
    this.ruleSet = result.ruleSet;
    return this.ruleSet;
  }

  /** What the admin API's functions need; the worker is another process (it polls), so there is none to wake. */
  private context(ruleSet: RuleSet | null, dispatcher: AdminContext['dispatcher'] | null): AdminContext {
    const unavailable = (): never => {
      throw new Error('not available in this command');
    };
    return {
      store: this.store,
      rules: { current: () => ruleSet ?? unavailable(), status: unavailable },
      wakeWorker: () => {},
      get dispatcher() {
        return dispatcher ?? unavailable();
      },
      sources: new Map(this.config.sources.map((s) => [s.name, s])),
      logger: createLogger('silent'),
      now: Date.now,
      env: this.env,
    };
  }

  /** The newest event id now: bulk operations leave out events that arrive while they run. */
  private async newestEventId(): Promise<number> {
    return (await this.store.listEvents({}, { limit: 1 })).items[0]?.id ?? 0;
  }

  async listEvents(query: EventQuery, page: { limit: number; cursor?: string }): Promise<Paged<EventSummaryView>> {
    const result = await this.store.searchEvents(query, { limit: page.limit, ...(page.cursor !== undefined && { after: decodeEventCursor(page.cursor) }) });
    return { items: result.items.map(eventSummaryView), nextCursor: result.next ? encodeEventCursor(result.next) : null };
  }

  async getEvent(id: number): Promise<EventWithDeliveries> {
    const event = await this.store.getEvent(id);
    if (!event) throw new HookrelayError('not_found', `No event ${id}.`);
    const { items } = await this.store.listDeliveries({ eventId: id }, { limit: 500 });
    const details = await Promise.all(items.map((d) => this.store.getDelivery(d.id)));
    return { event: eventDetailView(event), deliveries: details.filter((d) => d !== null).map(deliveryDetailView) };
  }

  async replayEvent(id: number, request: RoutedReplayRequest): Promise<ReplayResultView> {
    return replayResultView(await replayWithRouting(this.context(await this.rules(), null), id, request));
  }

  async replayEvents(query: EventQuery & { afterId?: number }, options: BulkReplayOptions, control: BulkControl): Promise<BulkResult> {
    const ruleSet = await this.rules();
    const route = options.route ?? DEFAULT_ROUTE_MODE;
    if (route === 'current' && options.ruleId !== undefined && !ruleSet.rules.some((r) => r.id === options.ruleId)) {
      throw new HookrelayError('not_found', `No rule "${options.ruleId}" in the current rule set.`);
    }
    const planner = new BulkReplayPlanner(new ReplayRouter(this.store, this.env, () => ruleSet), route, options.ruleId ?? null, options.dryRun ?? false);
    const { afterId, ...eventQuery } = query;
    const selection = selectionOf(eventQuery);
    const throughId = await this.newestEventId();
    const total = await this.store.countEvents({ ...selection, afterId, throughId });
    control.onProgress({ total, processed: 0, created: 0, failed: 0 });
    // The admin API's replay job, batch for batch: one transaction each, so Ctrl-C leaves whole batches.
    return { ...bulkResult(await runReplayJob(this.batchLoop(control), { selection, throughId, planner, total, afterId })), summary: planner.summary() };
  }

  async replayEdited(id: number, request: EditedReplayOptions): Promise<EditedReplayResultView> {
    const target = editTargetOf(request);
    const answer = await replayEdited(this.context(await this.rules(), null), id, { body: Buffer.from(request.body, 'utf8'), meantInvalid: request.meantInvalid, target, via: 'cli' });
    return editedReplayView(answer);
  }

  async resendEvent(id: number, url: string, signing: ResendSigning): Promise<ResendResult> {
    const dispatcher = createGuardedDispatcher({ guard: createSsrfGuard({ allowNetworks: this.config.delivery.allowNetworks }) });
    try {
      return await resendEvent(this.context(null, dispatcher), id, { url, signing });
    } finally {
      await dispatcher.close();
    }
  }

  async exportEvents(query: EventQuery): Promise<EventExport> {
    const selection = { ...selectionOf(query), throughId: await this.newestEventId() };
    const total = await this.store.countEvents(selection);
    const store = this.store;
    async function* records(): AsyncGenerator<ExportRecord> {
      // A time range starts at its first event, not with a scan of the history before it.
      const start = await startingAfterId(store, selection);
      if (start === null) return;
      let afterId = start;
      for (;;) {
        const events = await store.listEventsForExport({ ...selection, afterId }, JOB_BATCH_SIZE); // as many per read as a job's batch
        if (events.length === 0) return;
        for (const event of events) yield recordFromStored(event);
        afterId = events.at(-1)!.id;
        await yieldToEventLoop();
      }
    }
    return { total, records: records() };
  }

  /** Local mode only: the admin API has no import endpoint. */
  async importEvents(events: ImportedEvent[]): Promise<ImportResult> {
    return this.store.importEvents(events);
  }

  async listDeliveries(query: DeliveryQuery, page: { limit: number; cursor?: string }): Promise<Paged<DeliveryView>> {
    const result = await this.store.listDeliveries(query, { limit: page.limit, ...(page.cursor !== undefined && { before: decodeDeliveryCursor(page.cursor) }) });
    return { items: result.items.map(deliveryView), nextCursor: result.nextCursor === null ? null : encodeDeliveryCursor(result.nextCursor) };
  }

  async retryDelivery(id: number): Promise<DeliveryView> {
    const current = await this.store.getDelivery(id);
    if (!current) throw new HookrelayError('not_found', `No delivery ${id}.`);
    if (!(await this.store.retryDelivery(id, Date.now()))) throw new HookrelayError('conflict', `Delivery ${id} is already pending.`, { state: current.state });
    return deliveryView((await this.store.getDelivery(id))!);
  }

  async retryDeliveries(query: RetryQuery & { afterId?: number }, control: BulkControl): Promise<BulkResult> {
    const { ruleId, eventId, afterId, deliveryState: _deliveryState, ...eventQuery } = query;
    const filter: BulkDeliveryFilter = { ...selectionOf(eventQuery), ruleId, eventId, afterId };
    const total = await this.store.countDeadDeliveries(filter);
    control.onProgress({ total, processed: 0, created: 0, failed: 0 });
    return bulkResult(await runRetryJob(this.batchLoop(control), filter, total, Date.now));
  }

  /** The admin jobs' batch loop driven from the terminal: Ctrl-C stops it between batches; a running server's worker polls for the new rows. */
  private batchLoop(control: BulkControl): BatchLoop {
    return { store: this.store, shouldStop: () => control.signal.aborted, onProgress: async (progress) => control.onProgress(progress), wakeWorker: () => {} };
  }

  async close(): Promise<void> {
    await this.store.close();
  }
}
