import type { DeliveryPauses } from '../delivery/delivery-pauses.js';
import { HookrelayError } from '../errors.js';
import type { EventSearch, EventStore } from '../store/event-store.js';
import type { DeliveryDetail, DeliveryFilter, OutboxStore } from '../store/outbox-store.js';
import type { OperationsContext } from './context.js';
import { deliveryWaits, type WaitSources } from './delivery-wait.js';
import { assertRetryable } from './retry-skips.js';
import { decodeDeliveryCursor, decodeEventCursor, encodeDeliveryCursor, encodeEventCursor } from './cursor.js';
import type { DeliveryDetailView, DeliveryView, EventDetailView, EventListItemView } from './view-schemas.js';
import { deliveryDetailView, deliveryView, eventDetailView, eventSummaryView, forwardingView } from './views.js';

/** One page of a list, with the opaque cursor of the next (older) page; null on the last page. */
export interface Paged<T> {
  items: T[];
  nextCursor: string | null;
}

export interface PageRequest {
  limit: number;
  cursor?: string;
}

/** `GET /events/:id`: the event and every delivery of it with its attempts, newest first. */
export interface EventWithDeliveries {
  event: EventDetailView;
  deliveries: DeliveryDetailView[];
}

/**
 * One page of the events list (admin API, console, `events list`), each event with its forwarding summary:
 * the page's delivery counts come from one store call, not one per event.
 */
export async function listEventsPage(store: EventStore & OutboxStore, filter: EventSearch, page: PageRequest): Promise<Paged<EventListItemView>> {
  const result = await store.listEvents(filter, { limit: page.limit, ...(page.cursor !== undefined && { after: decodeEventCursor(page.cursor) }) });
  const counts = await store.deliveryCountsByEvent(result.items.map((event) => event.id));
  return {
    items: result.items.map((event) => ({ ...eventSummaryView(event), forwarding: forwardingView(counts.get(event.id)!) })),
    nextCursor: result.next ? encodeEventCursor(result.next) : null,
  };
}

/** `waits`: what tells why each pending delivery waits (absent: `wait` is null). */
export async function listDeliveriesPage(store: EventStore & OutboxStore, filter: DeliveryFilter, page: PageRequest, pauses: DeliveryPauses, waits?: WaitSources): Promise<Paged<DeliveryView>> {
  const result = await store.listDeliveries(filter, { limit: page.limit, ...(page.cursor !== undefined && { before: decodeDeliveryCursor(page.cursor) }) });
  const wait = waits && (await deliveryWaits(waits, result.items));
  return { items: result.items.map((d) => deliveryView(d, pauses, wait)), nextCursor: result.nextCursor === null ? null : encodeDeliveryCursor(result.nextCursor) };
}

async function deliveriesOfEvent(store: EventStore & OutboxStore, eventId: number): Promise<DeliveryDetail[]> {
  const details: DeliveryDetail[] = [];
  let before: number | undefined;
  do {
    const page = await store.listDeliveries({ eventId }, { limit: 500, ...(before !== undefined && { before }) });
    for (const delivery of page.items) {
      const detail = await store.getDelivery(delivery.id);
      if (detail) details.push(detail);
    }
    before = page.nextCursor ?? undefined;
  } while (before !== undefined);
  return details;
}

export async function eventWithDeliveries(store: EventStore & OutboxStore, eventId: number, pauses: DeliveryPauses, waits?: WaitSources): Promise<EventWithDeliveries> {
  const event = await store.getEvent(eventId);
  if (!event) throw new HookrelayError('not_found', `No event ${eventId}.`);
  const deliveries = await deliveriesOfEvent(store, eventId);
  const wait = waits && (await deliveryWaits(waits, deliveries));
  return { event: eventDetailView(event), deliveries: deliveries.map((d) => deliveryDetailView(d, pauses, wait)) };
}

export async function getDeliveryDetail(store: EventStore & OutboxStore, id: number, pauses: DeliveryPauses, waits?: WaitSources): Promise<DeliveryDetailView> {
  const delivery = await store.getDelivery(id);
  if (!delivery) throw new HookrelayError('not_found', `No delivery ${id}.`);
  return deliveryDetailView(delivery, pauses, waits && (await deliveryWaits(waits, [delivery])));
}

/** Makes a delivered or dead delivery pending and due now (`not_found`, or `conflict` when already pending). */
export async function retryDelivery(ctx: Pick<OperationsContext, 'store' | 'now' | 'rules'>, id: number, pauses: DeliveryPauses): Promise<DeliveryView> {
  const existing = await ctx.store.getDelivery(id);
  if (!existing) throw new HookrelayError('not_found', `No delivery ${id}.`);
  if (existing.state !== 'pending') await assertRetryable(ctx.store, existing, ctx.rules.current());
  const now = ctx.now();
  if (!(await ctx.store.retryDelivery(id))) throw new HookrelayError('conflict', `Delivery ${id} is already pending.`, { state: existing.state });
  // The store wakes the workers as it commits, so a read now could already see the next attempt: answer with
  // the state the retry left (what `retryDelivery` sets), as it was when the retry committed.
  const { attemptLog: _attempts, ...before } = existing;
  return deliveryView({ ...before, state: 'pending', nextAttemptAt: now, deadReason: null, updatedAt: now }, pauses);
}
