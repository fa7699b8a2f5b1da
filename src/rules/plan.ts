import type { NewDelivery } from '../store/store.js';
import { orderKeyOf } from './order-key.js';
import { matchingRules } from './rule-index.js';
import type { RuleEventInput, RuleSet } from './types.js';

/**
 * The deliveries one event should become under `ruleSet`: one per enabled rule that matches, in rule-set
 * order, transformed where the rule says so, due after the rule's first schedule step. Ingest calls it once
 * so the outbox rows commit with the event; replay and dry runs plan the same way. A transform that fails
 * gives a delivery stored dead-lettered with the reason, not a dropped one. An ordered rule's delivery carries
 * its order key (the store gives it the next place in that key's order).
 */
export async function planDeliveries(ruleSet: RuleSet, input: RuleEventInput): Promise<NewDelivery[]> {
  if (ruleSet.rules.length === 0) return [];
  return Promise.all(
    matchingRules(ruleSet, input).map(async (rule): Promise<NewDelivery> => {
      const orderKey = rule.order ? orderKeyOf(rule.order, input.body) : null;
      const planned = { ruleId: rule.id, ruleSetHash: ruleSet.hash, delayMs: rule.retryScheduleMs[0] ?? 0, ...(orderKey !== null && { orderKey }) };
      if (!rule.hasTransform) return { ...planned, body: null, contentType: 'application/json' };
      try {
        const rendered = await rule.render(input);
        return { ...planned, body: rendered.body, contentType: rendered.contentType };
      } catch (err) {
        // Every transform error says it is one ("transform failed at position 4: ...").
        return { ...planned, body: null, contentType: 'application/json', deadReason: (err as Error).message ?? String(err) };
      }
    }),
  );
}
