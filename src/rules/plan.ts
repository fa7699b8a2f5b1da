import type { NewDelivery } from '../store/outbox-store.js';
import { orderKeyOf } from './order-key.js';
import { matchingRules } from './rule-index.js';
import type { RuleEventInput, RuleSet } from './types.js';

/**
 * The deliveries one event should become under `ruleSet`: one per enabled rule that matches, in rule-set
 * order, due after the rule's first schedule step. Ingest calls it once so the outbox rows commit with the
 * event; replay plans the same way. No transform runs here: a rule author's code never delays an
 * acknowledgement. A row without a body whose rule version has a transform is rendered by the delivery
 * worker before its first attempt, in the transform sandbox, and keeps that body for every retry. An
 * ordered rule's delivery carries its order key (the store gives it the next place in that key's order).
 */
export function planDeliveries(ruleSet: RuleSet, input: RuleEventInput): NewDelivery[] {
  if (ruleSet.rules.length === 0) return [];
  return matchingRules(ruleSet, input).map((rule): NewDelivery => {
    const orderKey = rule.order ? orderKeyOf(rule.order, input.body) : null;
    return {
      ruleId: rule.id,
      ruleSetHash: ruleSet.hash,
      delayMs: rule.retryScheduleMs[0] ?? 0,
      ...(orderKey !== null && { orderKey }),
      body: null,
      contentType: 'application/json',
    };
  });
}
