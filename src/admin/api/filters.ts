import type { BulkDeliveryFilter, EventSearch } from '../../store/store.js';
import type { EventFilterInput } from './request-schemas.js';

/** The API's filter names are the store's. */
export function toEventSearch(filter: EventFilterInput): EventSearch {
  return filter;
}

export function toDeadDeliveryFilter(filter: Omit<EventFilterInput, 'deliveryState'> & { ruleId?: string; eventId?: number }): BulkDeliveryFilter {
  return filter;
}
