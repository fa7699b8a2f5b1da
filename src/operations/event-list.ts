import { decodeEventCursor, encodeEventCursor } from '../admin/api/cursor.js';
import type { EventListItemView } from '../admin/api/response-schemas.js';
import { eventSummaryView, forwardingView } from '../admin/api/views.js';
import type { EventSearch, Store } from '../store/store.js';

export interface EventListPage {
  items: EventListItemView[];
  nextCursor: string | null;
}

/**
 * One page of the events list (admin API, console, `events list`), each event with its forwarding summary:
 * the page's delivery counts come from one store call, not one per event.
 */
export async function listEventPage(store: Store, search: EventSearch, page: { limit: number; cursor?: string }): Promise<EventListPage> {
  const result = await store.searchEvents(search, { limit: page.limit, ...(page.cursor !== undefined && { after: decodeEventCursor(page.cursor) }) });
  const counts = await store.deliveryCountsByEvent(result.items.map((event) => event.id));
  return {
    items: result.items.map((event) => ({ ...eventSummaryView(event), forwarding: forwardingView(counts.get(event.id)!) })),
    nextCursor: result.next ? encodeEventCursor(result.next) : null,
  };
}
