import { HookrelayError } from '../errors.js';
import { dryRunRules } from '../rules/dry-run.js';
import type { RuleSet } from '../rules/types.js';
import type { EventStore, StoredEvent } from '../store/event-store.js';
import { ruleInputOf } from './event-input.js';
import type { DryRunResultView } from './view-schemas.js';

/** One stored event by id, or the newest `last` (the newest one when neither is given). */
export interface DryRunTarget {
  eventId?: number;
  last?: number;
}


async function eventsToTry(store: EventStore, target: DryRunTarget): Promise<StoredEvent[]> {
  if (target.eventId !== undefined) {
    const event = await store.getEvent(target.eventId);
    if (!event) throw new HookrelayError('not_found', `No event ${target.eventId}.`);
    return [event];
  }
  const newest = await store.listEvents({}, { limit: target.last ?? 1 });
  const events = await Promise.all(newest.items.map((summary) => store.getEvent(summary.id)));
  return events.filter((e): e is StoredEvent => e !== null);
}

/**
 * What one rule would do with stored events, newest first: whether it matches and why not, and what it
 * would send (POST /rules/:id/dry-run, `rules test --history`). Nothing is stored or sent.
 */
export async function dryRunRule(store: EventStore, ruleSet: RuleSet, ruleId: string, target: DryRunTarget): Promise<DryRunResultView> {
  const rule = ruleSet.rules.find((r) => r.id === ruleId);
  if (!rule) throw new HookrelayError('not_found', `No rule "${ruleId}" in the current rule set.`, { ruleId });
  const oneRule = { ...ruleSet, rules: [rule] };
  const results: DryRunResultView['results'] = [];
  for (const event of await eventsToTry(store, target)) {
    let input;
    try {
      input = ruleInputOf(event);
    } catch (err) {
      results.push({ eventId: event.id, event: event.event, matched: false, reason: (err as Error).message });
      continue;
    }
    const [outcome] = await dryRunRules(oneRule, input);
    results.push({
      eventId: event.id,
      event: event.event,
      matched: outcome!.matched,
      reason: outcome!.reason,
      ...(outcome!.body !== undefined && { body: outcome!.body.toString('utf8') }),
      ...(outcome!.contentType !== undefined && { contentType: outcome!.contentType }),
      ...(outcome!.deadReason !== undefined && { deadReason: outcome!.deadReason, renderError: outcome!.deadReason }),
    });
  }
  return { results };
}
