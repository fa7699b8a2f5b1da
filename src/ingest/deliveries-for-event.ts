import { firstAttemptDelay } from '../delivery/retry-schedule.js';
import { planDeliveries } from '../rules/plan.js';
import type { RuleEventInput, RuleSet } from '../rules/types.js';
import type { NewDelivery } from '../store/store.js';

/**
 * The outbox rows one event should produce under the current rule set: rules are matched (and transforms
 * run) once, here, so the rows commit in the same transaction as the event.
 */
export async function deliveriesForEvent(ruleSet: RuleSet, input: RuleEventInput): Promise<NewDelivery[]> {
  if (ruleSet.rules.length === 0) return [];
  const planned = await planDeliveries(ruleSet, input);
  return planned.map((p) => {
    const rule = ruleSet.rules.find((r) => r.id === p.ruleId); // only matched rules reach here: few
    return {
      ruleId: p.ruleId,
      ruleSetHash: p.ruleSetHash,
      body: p.body,
      contentType: p.contentType,
      delayMs: rule ? firstAttemptDelay(rule.retryScheduleMs) : 0,
      ...(p.renderError !== undefined ? { deadReason: `transform failed: ${p.renderError}` } : {}),
    };
  });
}
