import type { EventFilter } from './event-store.js';
import type { DeliveryOrigin, NewDelivery } from './outbox-store.js';

/**
 * Bulk replay and retry (jobs, the admin API and the CLI): many deliveries created or retried in one transaction.
 */
export interface BulkStore {
  /** Replay of many events in one transaction: the outbox rows for each event; returns how many rows. */
  createDeliveriesForEvents(batch: { eventId: number; deliveries: NewDelivery[] }[], origin: DeliveryOrigin): Promise<number>;
  countDeadDeliveries(filter: BulkDeliveryFilter): Promise<number>;
  /** Dead deliveries matching `filter`, counted per rule id. */
  countDeadDeliveriesByRule(filter: BulkDeliveryFilter): Promise<Map<string, number>>;
  /** Makes up to `limit` matching dead deliveries (ascending id) pending and due now, in one transaction; returns their ids. */
  retryDeadDeliveries(filter: BulkDeliveryFilter, limit: number): Promise<number[]>;
}

/** Dead-lettered deliveries to retry: by rule, by event, or by anything about their events. */
export interface BulkDeliveryFilter extends EventFilter {
  ruleId?: string;
  eventId?: number;
  /** Only deliveries with an id greater than this. */
  afterId?: number;
  /**
   * Today's rule ids. With it, only the deliveries today's rules still send: of one of these rules, or
   * planned by a one-off rule set (an edited event sent to a URL, sent as kept). With `removed: true`, only
   * the others: those the worker dead-letters as "rule removed".
   */
  todaysRules?: { ids: readonly string[]; removed?: boolean };
}
