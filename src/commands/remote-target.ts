import { HookrelayError } from '../errors.js';
import type {
  AdminTarget, ReleaseResultView, BulkControl, ClusterView, BulkResult, DeliveryQuery, DeliveryView, EventExport, EventListItemView, EventQuery, EventWithDeliveries, JobView, Paged,
  ResendResult, ResendSigning, RetryQuery, ReplayResultView, RoutedReplayRequest, BulkReplayOptions, EditedReplayOptions, EditedReplayResultView,
} from './admin-target.js';
import type { EventExplanation, ExplainRequest } from '../operations/explain-event.js';
import { AdminClient } from './admin-client.js';
import { pauseUnlessAborted } from './interrupt.js';
import { recordFromDetail, type ExportRecord } from '../operations/export-format.js';

const PAGE_LIMIT = 500;
const JOB_POLL_MS = 250;
/** Event details fetched at once during a remote export. */
const EXPORT_CONCURRENCY = 8;

function refuseAfterId(afterId: number | undefined): void {
  if (afterId !== undefined) throw new HookrelayError('bad_request', '--after-id applies to the store opened directly (--direct); an admin API job is resumed by running it again with a narrower filter.');
}

/** The event filter as the admin API takes it, in queries and in job bodies. */
function apiFilter(query: EventQuery): Record<string, string | number | undefined> {
  return { ...query };
}

/** A running server's admin API (`--url`, `--token`). Bulk replay and retry run there as jobs, which this follows. */
export class RemoteTarget implements AdminTarget {
  readonly mode = 'remote';
  private readonly client: AdminClient;

  constructor(url: string, token: string) {
    this.client = new AdminClient(url, token);
  }

  listEvents(query: EventQuery, page: { limit: number; cursor?: string }): Promise<Paged<EventListItemView>> {
    return this.client.call('GET', '/events', { query: { ...apiFilter(query), limit: page.limit, cursor: page.cursor } });
  }

  getEvent(id: number): Promise<EventWithDeliveries> {
    return this.client.call('GET', `/events/${id}`);
  }

  releaseEvent(id: number, request: { force?: boolean; by: string }): Promise<ReleaseResultView> {
    return this.client.call<ReleaseResultView>('POST', `/events/${id}/release`, { body: request });
  }

  replayEvent(id: number, request: RoutedReplayRequest): Promise<ReplayResultView> {
    return this.client.call<ReplayResultView>('POST', `/events/${id}/replay`, { body: request });
  }

  async replayEvents(query: EventQuery & { afterId?: number }, options: BulkReplayOptions, control: BulkControl): Promise<BulkResult> {
    const { afterId, ...filter } = query;
    refuseAfterId(afterId);
    const job = await this.client.call<JobView>('POST', '/events/replay', { body: { filter: apiFilter(filter), ...options } });
    return this.follow(job, control);
  }

  replayEdited(id: number, request: EditedReplayOptions): Promise<EditedReplayResultView> {
    return this.client.call<EditedReplayResultView>('POST', `/events/${id}/edited-replay`, { body: { ...request, via: 'cli' } });
  }

  explainEvent(id: number, request: ExplainRequest): Promise<EventExplanation> {
    return this.client.call('GET', `/events/${id}/explain`, { query: { ruleId: request.ruleId } });
  }

  resendEvent(id: number, url: string, signing: ResendSigning): Promise<ResendResult> {
    return this.client.call('POST', `/events/${id}/resend`, { body: { url, signing } });
  }

  async exportEvents(query: EventQuery): Promise<EventExport> {
    // The list is newest first; collect the ids, then write oldest first like a local export.
    const ids: number[] = [];
    let cursor: string | undefined;
    do {
      const page = await this.listEvents(query, { limit: PAGE_LIMIT, cursor });
      ids.push(...page.items.map((e) => e.id));
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    ids.reverse();
    const client = this.client;
    async function* records(): AsyncGenerator<ExportRecord> {
      for (let i = 0; i < ids.length; i += EXPORT_CONCURRENCY) {
        const details = await Promise.all(ids.slice(i, i + EXPORT_CONCURRENCY).map((id) => client.call<EventWithDeliveries>('GET', `/events/${id}`)));
        for (const detail of details) yield recordFromDetail(detail.event);
      }
    }
    return { total: ids.length, records: records() };
  }

  listDeliveries(query: DeliveryQuery, page: { limit: number; cursor?: string }): Promise<Paged<DeliveryView>> {
    return this.client.call('GET', '/deliveries', { query: { ...query, limit: page.limit, cursor: page.cursor } });
  }

  retryDelivery(id: number): Promise<DeliveryView> {
    return this.client.call('POST', `/deliveries/${id}/retry`);
  }

  async retryDeliveries(query: RetryQuery & { afterId?: number }, control: BulkControl): Promise<BulkResult> {
    const { afterId, ...filter } = query;
    refuseAfterId(afterId);
    const job = await this.client.call<JobView>('POST', '/deliveries/retry', { body: { filter: apiFilter(filter) } });
    return this.follow(job, control);
  }

  /** Polls the job until it ends; on Ctrl-C asks the server to cancel it and waits for it to stop. */
  private async follow(started: JobView, control: BulkControl): Promise<BulkResult> {
    let job = started;
    let cancelRequested = false;
    while (job.state === 'running') {
      control.onProgress({ total: job.total, processed: job.processed, created: job.created, failed: job.failed });
      if (control.signal.aborted && !cancelRequested) {
        cancelRequested = true;
        job = await this.client.call<JobView>('POST', `/jobs/${job.id}/cancel`);
        continue;
      }
      await pauseUnlessAborted(JOB_POLL_MS, control.signal);
      if (control.signal.aborted && !cancelRequested) continue;
      job = await this.client.call<JobView>('GET', `/jobs/${job.id}`);
    }
    const progress = { total: job.total, processed: job.processed, created: job.created, failed: job.failed };
    control.onProgress(progress);
    return { ...progress, state: job.state, error: job.error, jobId: String(job.id), summary: job.summary };
  }

  cluster(): Promise<ClusterView> {
    return this.client.call('GET', '/cluster');
  }

  async close(): Promise<void> {}
}
