import { mismatchReason } from './explain.js';
import { planDeliveries } from './plan.js';
import type { RuleEventInput, RuleSet } from './types.js';

/** What one rule would do with one event: for `rules test` and the console, nothing is sent. */
export interface RuleDryRun {
  ruleId: string;
  file: string;
  line: number;
  matched: boolean;
  /** Why it did not match: every failing clause (event, source, where), or that it is disabled; null when it matched. */
  reason: string | null;
  /** The body that would be sent (the original bytes when the rule has no transform). */
  body?: Buffer;
  contentType?: string;
  /** Set when the transform fails: the delivery would be dead-lettered with this reason. */
  deadReason?: string;
}

export async function dryRunRules(ruleSet: RuleSet, input: RuleEventInput): Promise<RuleDryRun[]> {
  const planned = new Map((await planDeliveries(ruleSet, input)).map((delivery) => [delivery.ruleId, delivery]));
  return ruleSet.rules.map((rule): RuleDryRun => {
    const outcome = { ruleId: rule.id, file: rule.file, line: rule.line };
    const delivery = planned.get(rule.id);
    if (!delivery) return { ...outcome, matched: false, reason: mismatchReason(rule, input) };
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
