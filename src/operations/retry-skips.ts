import { HookrelayError } from '../errors.js';
import type { RuleSet } from '../rules/types.js';
import type { BulkDeliveryFilter, BulkStore } from '../store/bulk-store.js';
import type { RuleSetStore } from '../store/rule-set-store.js';

/**
 * A retry sends a delivery with its rule version, but today's rule set decides whether it goes at all: a
 * delivery whose rule was removed would be dead-lettered again at once ("rule removed"), one more attempt
 * counted for nothing. Retries leave those alone and say so.
 */
export interface RetrySkip {
  ruleId: string;
  count: number;
  reason: 'rule_removed';
  message: string;
}

/** The summary a bulk retry reports (its job's `summary`): the dead deliveries it left alone, and why. */
export type RetrySummary = {
  skipped: RetrySkip[];
};

function removedMessage(ruleId: string): string {
  return `rule "${ruleId}" is no longer in the rule set, so a retry would be dead-lettered again at once ("rule removed"); add the rule back, or replay the event with today's rules`;
}

/** `filter` narrowed to the dead deliveries today's rules would still send. */
export function retryableFilter(filter: BulkDeliveryFilter, rules: RuleSet): BulkDeliveryFilter {
  return { ...filter, todaysRules: { ids: rules.rules.map((rule) => rule.id) } };
}

/** The dead deliveries of `filter` a bulk retry leaves alone, per rule. */
export async function retrySkips(store: BulkStore, filter: BulkDeliveryFilter, rules: RuleSet): Promise<RetrySkip[]> {
  const counts = await store.countDeadDeliveriesByRule({ ...filter, todaysRules: { ids: rules.rules.map((rule) => rule.id), removed: true } });
  return [...counts].map(([ruleId, count]) => ({ ruleId, count, reason: 'rule_removed', message: removedMessage(ruleId) }));
}

/** Refuses to retry one delivery that today's rules would dead-letter again at once. */
export async function assertRetryable(
  store: RuleSetStore,
  delivery: { id: number; eventId: number; ruleId: string; ruleSetHash: string },
  rules: RuleSet,
): Promise<void> {
  if (rules.rules.some((rule) => rule.id === delivery.ruleId)) return;
  // An edited event sent to a URL is planned by a one-off set, never in the rule files: it is sent as kept.
  if ((await store.getRuleSet(delivery.ruleSetHash))?.kind === 'one-off') return;
  throw new HookrelayError('rule_removed', `Delivery ${delivery.id} is not retried: ${removedMessage(delivery.ruleId)}`, {
    deliveryId: delivery.id,
    eventId: delivery.eventId,
    ruleId: delivery.ruleId,
  });
}
