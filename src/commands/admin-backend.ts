import type {
  DeliveryDetailView, DeliveryView, EditedReplayResultView, EventDetailView, EventSummaryView, JobView, ReplayResultView, ResendResultView,
} from '../admin/api/response-schemas.js';
import type { RouteMode } from '../operations/replay-routing.js';
import type { RoutedReplayRequest } from '../operations/routed-replay.js';
import type { DeliveryState, Validation } from '../store/store.js';
import type { ExportRecord } from './ndjson-format.js';

export type { DeliveryDetailView, DeliveryView, EditedReplayResultView, EventDetailView, EventSummaryView, JobView, ReplayResultView, RoutedReplayRequest };
export type ResendResult = ResendResultView;

/** `GET /events/:id` of the admin API. */
export interface EventWithDeliveries {
  event: EventDetailView;
  deliveries: DeliveryDetailView[];
}

/** The event filter of `events list|replay|export` and `deliveries retry`, in the admin API's terms. */
export interface EventQuery {
  event?: string;
  source?: string;
  checkoutId?: string;
  email?: string;
  walletAddress?: string;
  transferId?: string;
  validation?: Validation;
  deliveryState?: DeliveryState;
  /** Unix ms, inclusive. */
  receivedFrom?: number;
  /** Unix ms, exclusive. */
  receivedTo?: number;
}

export interface DeliveryQuery {
  state?: DeliveryState;
  ruleId?: string;
  eventId?: number;
}

export interface RetryQuery extends EventQuery {
  ruleId?: string;
  eventId?: number;
}

export interface Paged<T> {
  items: T[];
  /** Pass back as `cursor` for the next (older) page; null on the last page. */
  nextCursor: string | null;
}

export type ResendSigning =
  | { mode: 'original' }
  | { mode: 'resign'; scheme: 'hmac-sha256-hex' | 'standard-webhooks'; secret: string }
  | { mode: 'none' };

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

export interface EventExport {
  total: number;
  records: AsyncIterable<ExportRecord>;
}

/**
 * What the events and deliveries commands need, implemented twice: on the data dir (local mode, the
 * store opened directly, with the admin API's own replay, resend and view code) and on the admin API
 * (remote mode, `--url`). Answers have the API's shapes either way.
 */
export interface AdminBackend {
  readonly mode: 'local' | 'remote';
  listEvents(query: EventQuery, page: { limit: number; cursor?: string }): Promise<Paged<EventSummaryView>>;
  getEvent(id: number): Promise<EventWithDeliveries>;
  replayEvent(id: number, request: RoutedReplayRequest): Promise<ReplayResultView>;
  replayEvents(query: EventQuery & { afterId?: number }, options: BulkReplayOptions, control: BulkControl): Promise<BulkResult>;
  /** Edit and replay: the edited body stored as a copy linked to event `id`, then sent (made through the CLI). */
  replayEdited(id: number, request: EditedReplayOptions): Promise<EditedReplayResultView>;
  resendEvent(id: number, url: string, signing: ResendSigning): Promise<ResendResult>;
  exportEvents(query: EventQuery): Promise<EventExport>;
  listDeliveries(query: DeliveryQuery, page: { limit: number; cursor?: string }): Promise<Paged<DeliveryView>>;
  retryDelivery(id: number): Promise<DeliveryView>;
  retryDeliveries(query: RetryQuery & { afterId?: number }, control: BulkControl): Promise<BulkResult>;
  close(): Promise<void>;
}
