import { HookrelayError } from '../../errors.js';
import { dryRunRules } from '../../rules/dry-run.js';
import type { StoredEvent } from '../../store/store.js';
import type { OperationsContext } from '../../operations/context.js';
import { ruleInputOf } from '../../operations/event-input.js';
import type { DryRunResultView } from '../../operations/view-schemas.js';

async function eventsToTry(ctx: OperationsContext, target: { eventId?: number; last?: number }): Promise<StoredEvent[]> {
  if (target.eventId !== undefined) {
    const event = await ctx.store.getEvent(target.eventId);
    if (!event) throw new HookrelayError('not_found', `No event ${target.eventId}.`);
    return [event];
  }
  const newest = await ctx.store.listEvents({}, { limit: target.last ?? 1 });
  const events = await Promise.all(newest.items.map((summary) => ctx.store.getEvent(summary.id)));
  return events.filter((e): e is StoredEvent => e !== null);
}

/** POST /rules/:id/dry-run: what one rule would do with stored events; nothing is stored or sent. */
export async function dryRunRule(ctx: OperationsContext, ruleId: string, target: { eventId?: number; last?: number }): Promise<DryRunResultView> {
  const ruleSet = ctx.rules.current();
  const rule = ruleSet.rules.find((r) => r.id === ruleId);
  if (!rule) throw new HookrelayError('not_found', `No rule "${ruleId}" in the current rule set.`, { ruleId });
  const oneRule = { ...ruleSet, rules: [rule] };
  const results: DryRunResultView['results'] = [];
  for (const event of await eventsToTry(ctx, target)) {
    let input;
    try {
      input = ruleInputOf(event);
    } catch (err) {
      results.push({ eventId: event.id, matched: false, reason: (err as Error).message });
      continue;
    }
    const [outcome] = await dryRunRules(oneRule, input);
    results.push({
      eventId: event.id,
      matched: outcome!.matched,
      reason: outcome!.reason,
      ...(outcome!.body !== undefined && { body: outcome!.body.toString('utf8') }),
      ...(outcome!.contentType !== undefined && { contentType: outcome!.contentType }),
      ...(outcome!.deadReason !== undefined && { deadReason: outcome!.deadReason, renderError: outcome!.deadReason }),
    });
  }
  return { results };
}
