import { MAX_READABLE_DEPTH } from '../config.js';
import { nestsDeeperThan } from '../ingest/nesting.js';
import { attemptSent, lastAttemptSent, type DeliveryPauses } from '../delivery/delivery-pauses.js';
import type { EventSummary, StoredEvent } from '../store/event-store.js';
import type { Job } from '../store/job-store.js';
import type { NewEventSummary, NewEventWithBody } from '../store/new-event-store.js';
import type { Outage } from '../store/outage-store.js';
import type { Delivery, DeliveryCounts, DeliveryDetail } from '../store/outbox-store.js';
import type { DeliveryWaits } from './delivery-wait.js';
import type { EditedReplayAnswer } from './edited-replay.js';
import type { RoutedReplayAnswer } from './routed-replay.js';
import type { DeliveryDetailView, DeliveryView, EditedReplayResultView, EventDetailView, EventSummaryView, ForwardingView, JobView, OutageView, ReplayResultView, StreamedEventView } from './view-schemas.js';

/** Store records → admin API answers: unix ms become ISO 8601. */

const iso = (ms: number): string => new Date(ms).toISOString();
const isoOrNull = (ms: number | null): string | null => (ms === null ? null : iso(ms));

export function eventSummaryView(e: EventSummary): EventSummaryView {
  return {
    id: e.id,
    source: e.source,
    event: e.event,
    transferId: e.transferId,
    checkoutId: e.checkoutId,
    email: e.email,
    walletAddress: e.walletAddress,
    totalPriceUsd: e.totalPriceUsd,
    validation: e.validation,
    receivedAt: iso(e.receivedAt),
    lastReceivedAt: iso(e.lastReceivedAt),
    receivedCount: e.receivedCount,
    bodyBytes: e.bodyBytes,
    edit: e.edit && { editedFrom: e.edit.editedFrom, editedAt: iso(e.edit.editedAt), via: e.edit.via, number: e.edit.number },
    quarantine: e.quarantine,
    issues: e.issues,
    release: e.release && { ...e.release, releasedAt: iso(e.release.releasedAt) },
  };
}

/** An event's deliveries per state, and the one word that says where its forwarding stands. */
export function forwardingView(counts: DeliveryCounts): ForwardingView {
  const state = counts.pending > 0 ? 'pending' : counts.dead > 0 ? 'dead' : counts.delivered > 0 ? 'delivered' : 'none';
  return { state, ...counts };
}

export function eventDetailView(e: StoredEvent): EventDetailView {
  const { body, headers, importedAt, ruleSetHash, ...summary } = e;
  return {
    ...eventSummaryView({ ...summary, bodyBytes: body.length }),
    importedAt: isoOrNull(importedAt),
    ruleSetHash,
    headers,
    body: body.toString('utf8'),
    bodyBase64: body.toString('base64'),
    // Stored events passed the JSON check at ingest (imported ones may not have): never fail the page for it.
    parsed: parseOrNull(body),
  };
}

/** Null for a body that is not JSON, or nests deeper than readers walk (stored before the nesting limit). */
function parseOrNull(body: Buffer): unknown {
  if (nestsDeeperThan(body, MAX_READABLE_DEPTH)) return null;
  try {
    return JSON.parse(body.toString('utf8')) as unknown;
  } catch {
    return null;
  }
}

/** `pauses` says, from the current rules, why a pending delivery is held. */
export function deliveryView(d: Delivery, pauses: DeliveryPauses, waits?: DeliveryWaits): DeliveryView {
  return {
    id: d.id,
    eventId: d.eventId,
    ruleId: d.ruleId,
    ruleSetHash: d.ruleSetHash,
    origin: d.origin,
    state: d.state,
    contentType: d.contentType,
    attempts: d.attempts,
    nextAttemptAt: isoOrNull(d.nextAttemptAt),
    lastStatus: d.lastStatus,
    lastError: d.lastError,
    deadReason: d.deadReason,
    pausedReason: pauses(d),
    lastAttemptSent: lastAttemptSent(d),
    wait: waits?.(d) ?? null,
    createdAt: iso(d.createdAt),
    updatedAt: iso(d.updatedAt),
  };
}

export function deliveryDetailView(d: DeliveryDetail, pauses: DeliveryPauses, waits?: DeliveryWaits): DeliveryDetailView {
  return {
    ...deliveryView(d, pauses, waits),
    attemptLog: d.attemptLog.map((a) => ({
      attempt: a.attempt,
      startedAt: iso(a.startedAt),
      durationMs: a.durationMs,
      urlOrigin: a.urlOrigin,
      status: a.status,
      errorCode: a.errorCode,
      errorMessage: a.errorMessage,
      sent: attemptSent(a),
      responseExcerpt: a.responseExcerpt,
      outcome: a.outcome,
    })),
    redrives: d.redrives.map((r) => ({ outageId: r.outageId, kind: r.kind, redrivenAt: iso(r.redrivenAt), dueAt: iso(r.dueAt) })),
  };
}

export function outageView(o: Outage): OutageView {
  return { id: o.id, destination: o.destination, openedAt: iso(o.openedAt), closedAt: isoOrNull(o.closedAt), lastProbeAt: isoOrNull(o.lastProbeAt), redriven: o.redriven };
}

export function jobView(j: Job): JobView {
  return {
    id: j.id,
    kind: j.kind,
    state: j.state,
    filter: j.filter,
    ruleId: j.ruleId,
    total: j.total,
    processed: j.processed,
    created: j.created,
    failed: j.failed,
    startedAt: iso(j.startedAt),
    finishedAt: isoOrNull(j.finishedAt),
    error: j.error,
    summary: j.summary ?? null,
    nodeId: j.nodeId,
  };
}

export function replayResultView(answer: RoutedReplayAnswer, pauses: DeliveryPauses): ReplayResultView {
  const { created, sends, ...rest } = answer;
  return { ...rest, planned: sends, deliveries: created.map((d) => deliveryView(d, pauses)) };
}

export function editedReplayView(answer: EditedReplayAnswer, pauses: DeliveryPauses): EditedReplayResultView {
  const { copy, created, ...rest } = answer;
  return { ...rest, event: copy && eventDetailView(copy), deliveries: created.map((d) => deliveryView(d, pauses)) };
}

/** One message of an event stream (and one line of `hookrelay listen`): with headers and exact bytes when they were read. */
export function streamedEventView(event: NewEventSummary | NewEventWithBody): StreamedEventView {
  return {
    ...eventSummaryView(event),
    imported: event.importedAt !== null,
    importedAt: isoOrNull(event.importedAt),
    ...('body' in event && { headers: event.headers, bodyBase64: event.body.toString('base64') }),
  };
}
