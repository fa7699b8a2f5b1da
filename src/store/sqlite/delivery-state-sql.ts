import type { DeliveryState } from '../outbox-store.js';

const STATES: readonly DeliveryState[] = ['pending', 'delivered', 'dead'];

/**
 * "Has a delivery in this state" on `alias` (migration 006). A pending or dead row is in the partial index
 * deliveries_unsettled_event, and SQLite uses a partial index only when the query repeats its condition
 * word for word, so the term carries it; delivered rows are in no state index. The state is written as a
 * literal (it is one of three known words), for the same reason: a bound value never matches a condition.
 */
export function deliveryStateSql(alias: string, state: DeliveryState): string {
  if (!STATES.includes(state)) throw new Error(`unknown delivery state ${JSON.stringify(state)}`);
  return state === 'delivered' ? `${alias}.state = 'delivered'` : `${alias}.state = '${state}' AND ${alias}.state <> 'delivered'`;
}
