import { matchingRules } from './rule-index.js';
import type { RuleEventInput, RuleSet } from './types.js';

export interface PlannedDelivery {
  ruleId: string;
  ruleSetHash: string;
  /** The transformed body, or null to send the original bytes. */
  body: Buffer | null;
  contentType: string;
  /** Set when the transform failed: the delivery is stored dead-lettered with this reason, not dropped. */
  renderError?: string;
}

/**
 * What one event should become: a delivery per enabled rule that matches, in rule-set order, transformed
 * where the rule says so. Called once at ingest so the outbox rows and the event commit together.
 */
export async function planDeliveries(ruleSet: RuleSet, input: RuleEventInput): Promise<PlannedDelivery[]> {
  const matching = matchingRules(ruleSet, input);
  return Promise.all(
    matching.map(async (rule): Promise<PlannedDelivery> => {
      const planned = { ruleId: rule.id, ruleSetHash: ruleSet.hash };
      if (!rule.hasTransform) return { ...planned, body: null, contentType: 'application/json' };
      try {
        const rendered = await rule.render(input);
        return { ...planned, body: rendered.body, contentType: rendered.contentType };
      } catch (err) {
        return { ...planned, body: null, contentType: 'application/json', renderError: (err as Error).message ?? String(err) };
      }
    }),
  );
}
