import type {
  ClusterView, ReleaseResultView, DeliveryDetailView, DeliveryView, EditedReplayResultView, EventDetailView, EventListItemView, EventSummaryView, JobView, ReplayResultView, ResendResultView,
} from '../operations/view-schemas.js';
import type { EventExplanation, ExplainRequest } from '../operations/explain-event.js';
import type { EventSearch } from '../store/event-store.js';
import type { DeliveryState } from '../store/outbox-store.js';
import type { EventWithDeliveries, Paged } from '../operations/browse.js';
import type { EventExport } from '../operations/export-events.js';
import type { RouteMode } from '../operations/replay-routing.js';
import type { ResendSigning } from '../operations/resend-event.js';
import type { RoutedReplayRequest } from '../operations/routed-replay.js';

export type { EventExport, EventWithDeliveries, Paged, ResendSigning };

export type {
  ClusterView, ReleaseResultView, DeliveryDetailView, DeliveryView, EditedReplayResultView, EventDetailView, EventListItemView, EventSummaryView, JobView, ReplayResultView, RoutedReplayRequest,
};
export type ResendResult = ResendResultView;


/** The event filter of `events list|replay|export` and `deliveries retry`: the store's and the admin API's. */
export type EventQuery = EventSearch;

export interface DeliveryQuery {
  state?: DeliveryState;
  ruleId?: string;
  eventId?: number;
}

export interface RetryQuery extends EventQuery {
  ruleId?: string;
  eventId?: number;
}


/** Counters of a bulk replay or retry, as the admin API's jobs report them. */
export interface BulkProgress {
  total: number;
  processed: number;
  created: number;
  failed: number;
}

export interface EditedReplayOptions {
  /** The edited body as JSON text, stored and sent as it is. */
  body: string;
  meantInvalid?: boolean;
  ruleId?: string;
  to?: string;
}

export interface BulkReplayOptions {
  ruleId?: string;
  route?: RouteMode;
  /** Count what would be sent per rule (with a sample) and send nothing. */
  dryRun?: boolean;
}

export interface BulkResult extends BulkProgress {
  /** A replay: deliveries per rule, rules withheld, events with unknown original routing, a sample. */
  summary?: Record<string, unknown> | null;
  state: 'done' | 'cancelled' | 'failed';
  error: string | null;
  /** Remote mode: the admin API job that did the work. */
  jobId?: string;
  /** Local mode, when interrupted: the last event or delivery id handled; pass as --after-id to carry on. */
  resumeAfterId?: number;
}

export interface BulkControl {
  /** Aborted on Ctrl-C: the operation stops at its next batch boundary (remote: the job is cancelled). */
  signal: AbortSignal;
  onProgress: (progress: BulkProgress) => void;
}


/**
 * What the events and deliveries commands need, implemented twice: on the data dir (local mode, the
 * store opened directly, with the admin API's own replay, resend and view code) and on the admin API
 * (remote mode, `--url`). Answers have the API's shapes either way.
 */
export interface AdminTarget {
  readonly mode: 'local' | 'remote';
  listEvents(query: EventQuery, page: { limit: number; cursor?: string }): Promise<Paged<EventListItemView>>;
  getEvent(id: number): Promise<EventWithDeliveries>;
  replayEvent(id: number, request: RoutedReplayRequest): Promise<ReplayResultView>;
  /** Routes an event held in quarantine once (see operations/release-event.ts). */
  releaseEvent(id: number, request: { force?: boolean; by: string }): Promise<ReleaseResultView>;
  replayEvents(query: EventQuery & { afterId?: number }, options: BulkReplayOptions, control: BulkControl): Promise<BulkResult>;
  /** Edit and replay: the edited body stored as a copy linked to event `id`, then sent (made through the CLI). */
  replayEdited(id: number, request: EditedReplayOptions): Promise<EditedReplayResultView>;
  /** Why each current rule takes the event or not; nothing is sent. */
  explainEvent(id: number, request: ExplainRequest): Promise<EventExplanation>;
  resendEvent(id: number, url: string, signing: ResendSigning): Promise<ResendResult>;
  exportEvents(query: EventQuery): Promise<EventExport>;
  listDeliveries(query: DeliveryQuery, page: { limit: number; cursor?: string }): Promise<Paged<DeliveryView>>;
  retryDelivery(id: number): Promise<DeliveryView>;
  retryDeliveries(query: RetryQuery & { afterId?: number }, control: BulkControl): Promise<BulkResult>;
  /** The live nodes sharing the store, with warnings when their rule sets or versions differ. */
  cluster(): Promise<ClusterView>;
  close(): Promise<void>;
}
