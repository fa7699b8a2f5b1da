import { HookrelayError } from '../../errors.js';
import type { RuleSet } from '../../rules/types.js';
import type { BulkDeliveryFilter, BulkStore } from '../../store/bulk-store.js';
import type { EventSelection, EventStore } from '../../store/event-store.js';
import { BulkReplayPlanner } from '../bulk-replay-plan.js';
import type { ReplayRouter, RouteMode } from '../replay-routing.js';
import { retryableFilter, retrySkips, type RetrySummary } from '../retry-skips.js';
import { countEventsThrough, newestEventId } from './batches.js';
import type { ReplayJobInput } from './replay-job.js';

/**
 * What a bulk replay or retry runs, planned the same way for an admin API job (job-runner.ts) and for the
 * CLI driving the batch loop itself on the store (commands/local-target.ts).
 */

/** A replay routed by today's rules that names a rule needs that rule to exist today. */
export function checkReplayRule(rules: RuleSet, route: RouteMode, ruleId: string | null): void {
  if (route === 'current' && ruleId !== null && !rules.rules.some((rule) => rule.id === ruleId)) {
    throw new HookrelayError('not_found', `No rule "${ruleId}" in the current rule set.`, { ruleId });
  }
}

/** Events up to the newest one now (later arrivals are not replayed), counted, each planned by `router`'s rules. */
export async function planReplay(
  store: EventStore,
  router: ReplayRouter,
  request: { selection: EventSelection; ruleId: string | null; route: RouteMode; dryRun: boolean; afterId?: number },
): Promise<ReplayJobInput> {
  const { selection, afterId } = request;
  const throughId = await newestEventId(store);
  // A resumed run counts from where it carries on.
  const total = afterId === undefined ? await countEventsThrough(store, selection, throughId) : await store.countEvents({ ...selection, afterId, throughId });
  const planner = new BulkReplayPlanner(router, request.route, request.ruleId, request.dryRun);
  return { selection, throughId, planner, total, ...(afterId !== undefined && { afterId }) };
}

/** Dead letters of rules still in today's rule set; those of removed rules are skipped and counted in the summary. */
export async function planRetry(store: BulkStore, filter: BulkDeliveryFilter, rules: RuleSet): Promise<{ retryable: BulkDeliveryFilter; total: number; summary: RetrySummary }> {
  const retryable = retryableFilter(filter, rules);
  const total = await store.countDeadDeliveries(retryable);
  return { retryable, total, summary: { skipped: await retrySkips(store, filter, rules) } };
}
