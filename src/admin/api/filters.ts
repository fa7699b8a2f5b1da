import type { BulkDeliveryFilter, EventSearch } from '../../store/store.js';
import type { EventFilterInput } from './request-schemas.js';

/** The API names `result.id` "transferId"; the store calls it `resultId`. Absent keys stay absent. */
export function toEventSearch(filter: EventFilterInput): EventSearch {
  const { transferId, ...rest } = filter;
  return { ...rest, ...(transferId !== undefined && { resultId: transferId }) };
}

export function toDeadDeliveryFilter(filter: Omit<EventFilterInput, 'deliveryState'> & { ruleId?: string; eventId?: number }): BulkDeliveryFilter {
  const { transferId, ...rest } = filter;
  return { ...rest, ...(transferId !== undefined && { resultId: transferId }) };
}
