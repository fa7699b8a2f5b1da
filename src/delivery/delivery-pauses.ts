import type { CompiledRule, RuleSet } from '../rules/types.js';

/** Why the worker holds a pending delivery of this rule without attempting it, or null when it does not. */
export function pauseReason(rule: Pick<CompiledRule, 'id' | 'enabled'> | undefined): string | null {
  return rule !== undefined && !rule.enabled ? `rule "${rule.id}" is disabled: its deliveries wait until it is enabled again` : null;
}

/** Looks up, against one rule set, why a delivery is paused (null: it is not). */
export type DeliveryPauses = (delivery: { state: string; ruleId: string }) => string | null;

export function deliveryPauses(ruleSet: RuleSet): DeliveryPauses {
  const rules = new Map(ruleSet.rules.map((rule) => [rule.id, rule]));
  return (delivery) => (delivery.state === 'pending' ? pauseReason(rules.get(delivery.ruleId)) : null);
}

/** Nothing is known to be paused (the rules could not be read). */
export const NO_PAUSES: DeliveryPauses = () => null;

/**
 * Attempt errors raised before a request reached the destination: refused by the SSRF guard, not a usable
 * URL, the rule gone or its version unavailable, its transform failed, no such host, or a connection refused.
 */
const NOT_SENT_ERROR_CODES = new Set([
  'destination_refused', 'invalid_url', 'ERR_INVALID_URL', 'rule_removed', 'rule_version_unavailable', 'transform_failed', 'ENOTFOUND', 'EAI_AGAIN', 'ECONNREFUSED',
]);

/** Whether an attempt's request reached the destination: it has a status, or its error is not one raised before sending. */
export function attemptSent(attempt: { status: number | null; errorCode: string | null }): boolean {
  return attempt.status !== null || !NOT_SENT_ERROR_CODES.has(attempt.errorCode ?? '');
}

/** Whether the last attempt's request reached the destination, from its recorded `code: message` error; null without attempts. */
export function lastAttemptSent(delivery: { attempts: number; lastStatus: number | null; lastError: string | null }): boolean | null {
  if (delivery.attempts === 0) return null;
  return attemptSent({ status: delivery.lastStatus, errorCode: delivery.lastError?.split(':', 1)[0]?.trim() ?? '' });
}
