import { HookrelayError } from '../errors.js';
import { planDeliveries } from '../rules/plan.js';
import type { RuleEventInput, RuleSet } from '../rules/types.js';
import type { Delivery, NewDelivery } from '../store/store.js';
import type { OperationsContext } from './context.js';
import { ruleInputOf } from './event-input.js';

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
    const reason = rule.explainMismatch(input) ?? 'does not match';
    if (!options.force) throw new HookrelayError('rule_mismatch', `The event does not match rule "${rule.id}": ${reason}.`, { ruleId: rule.id, reason });
    return planDeliveries({ ...ruleSet, rules: [{ ...rule, matches: () => true }] }, input);
  }
  return planDeliveries({ ...ruleSet, rules: [rule] }, input);
}

/** POST /events/:id/replay: new outbox rows (origin `replay`) for one stored event, sent by the worker. */
export async function replayEvent(ctx: OperationsContext, eventId: number, options: ReplayOptions): Promise<Delivery[]> {
  const event = await ctx.store.getEvent(eventId);
  if (!event) throw new HookrelayError('not_found', `No event ${eventId}.`);
  const planned = await planReplay(ctx.rules.current(), ruleInputOf(event), options);
  if (planned.length === 0) return [];
  const ids = await ctx.store.createDeliveries(eventId, planned, 'replay');
  ctx.wakeWorker();
  const created = await Promise.all(ids.map((id) => ctx.store.getDelivery(id)));
  return created.filter((d): d is NonNullable<typeof d> => d !== null).map(({ attemptLog: _attempts, ...delivery }) => delivery);
}
