import { HookrelayError } from '../errors.js';
import { mismatchReason } from '../rules/explain.js';
import { planDeliveries } from '../rules/plan.js';
import type { RuleEventInput, RuleSet } from '../rules/types.js';
import type { NewDelivery } from '../store/outbox-store.js';

export interface ReplayOptions {
  ruleId?: string;
  force?: boolean;
}

/**
 * The deliveries a replay creates: every rule of the set that matches, or only `ruleId`. A rule the event
 * does not match is refused with the reason, unless forced (then it is planned as if it matched: same
 * transform, same first delay). Planning is the ingest path's own (`planDeliveries`).
 */
export async function planReplay(ruleSet: RuleSet, input: RuleEventInput, options: ReplayOptions): Promise<NewDelivery[]> {
  if (options.ruleId === undefined) return planDeliveries(ruleSet, input);
  const rule = ruleSet.rules.find((r) => r.id === options.ruleId);
  if (!rule) throw new HookrelayError('not_found', `No rule "${options.ruleId}" in the current rule set.`, { ruleId: options.ruleId });
  if (!rule.matches(input)) {
    const reason = mismatchReason(rule, input);
    if (!options.force) throw new HookrelayError('rule_mismatch', `The event does not match rule "${rule.id}": ${reason}.`, { ruleId: rule.id, reason });
    return planDeliveries({ ...ruleSet, rules: [{ ...rule, matches: () => true }] }, input);
  }
  return planDeliveries({ ...ruleSet, rules: [rule] }, input);
}
