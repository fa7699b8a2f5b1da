import { mismatchReason } from './explain.js';
import { planDeliveries } from './plan.js';
import { renderOutcome } from './render-outcome.js';
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

/**
 * Each rule's outcome for one event: planned as ingest plans it, and rendered in the transform sandbox as
 * the delivery loop renders it, so a dry run shows what delivery would send (a transform using `$now()`
 * aside: it reads the time of its render).
 */
export async function dryRunRules(ruleSet: RuleSet, input: RuleEventInput): Promise<RuleDryRun[]> {
  const planned = new Set(planDeliveries(ruleSet, input).map((delivery) => delivery.ruleId));
  return Promise.all(ruleSet.rules.map(async (rule): Promise<RuleDryRun> => {
    const outcome = { ruleId: rule.id, file: rule.file, line: rule.line };
    if (!planned.has(rule.id)) return { ...outcome, matched: false, reason: mismatchReason(rule, input) };
    const { body, contentType, deadReason } = await renderOutcome(rule, input);
    return { ...outcome, matched: true, reason: null, body, contentType, ...(deadReason !== undefined && { deadReason }) };
  }));
}
