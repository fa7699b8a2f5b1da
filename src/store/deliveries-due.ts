import type { NewDelivery } from './outbox-store.js';

/**
 * When a commit wakes the delivery loops (`Store.onDeliveriesDue`), on both backends: when it left at
 * least one delivery pending, due now or later. A woken worker asks when the next one falls due and sleeps
 * until then, so a delivery planned with a first delay is attempted on time rather than at the next poll.
 * Deliveries stored dead (a rule that cannot send them) wake no one; nor does a repeat, which stores nothing.
 * The signal is sent after the commit, never before: a worker woken earlier could find nothing to claim.
 */
export function leavesDeliveriesPending(deliveries: readonly NewDelivery[] | undefined): boolean {
  return deliveries?.some((delivery) => delivery.deadReason === undefined) ?? false;
}
