import { planDeliveries } from './plan.js';
import type { RuleEventInput, RuleSet } from './types.js';

/** What one rule would do with one event: for `rules test` and the console, nothing is sent. */
export interface RuleDryRun {
  ruleId: string;
  file: string;
  line: number;
  matched: boolean;
  /** Why it did not match (disabled, event, source, where clause); null when it matched. */
  reason: string | null;
  /** The body that would be sent (the original bytes when the rule has no transform). */
  body?: Buffer;
  contentType?: string;
  /** Set when the transform fails: the delivery would be dead-lettered with this reason. */
  deadReason?: string;
}

export async function dryRunRules(ruleSet: RuleSet, input: RuleEventInput): Promise<RuleDryRun[]> {
  const planned = new Map((await planDeliveries(ruleSet, input)).map((delivery) => [delivery.ruleId, delivery]));
  return ruleSet.rules.map((rule) => {
    const outcome = { ruleId: rule.id, file: rule.file, line: rule.line };
    const delivery = planned.get(rule.id);
    if (!delivery) return { ...outcome, matched: false, reason: rule.explainMismatch(input) ?? 'does not match' };
    return {
      ...outcome,
      matched: true,
      reason: null,
      body: delivery.body ?? input.raw,
      contentType: delivery.contentType,
      ...(delivery.deadReason !== undefined && { deadReason: delivery.deadReason }),
    };
  });
}
