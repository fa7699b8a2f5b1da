import type { NewDrift } from '../store/schema-store.js';
import type { RulesTouched } from './rules-touched.js';

/** One line about a drift, as alerts and the CLI say it. */
export function describeDrift(drift: Pick<NewDrift, 'source' | 'event' | 'kind' | 'path' | 'before' | 'after' | 'eventId'>): string {
  const subject = `${drift.source} ${drift.event}`;
  const types = (list: readonly string[]) => (list.length > 0 ? list.join('|') : 'nothing');
  switch (drift.kind) {
    case 'event_added':
      return `${subject}: a new event name (first event ${drift.eventId})`;
    case 'field_added':
      return `${subject}: new field ${drift.path} (${types(drift.after)}) (first event ${drift.eventId})`;
    case 'field_removed':
      return `${subject}: field ${drift.path} disappeared (was ${types(drift.before)} in every recent event) (first event without it ${drift.eventId})`;
    case 'type_changed':
      return `${subject}: field ${drift.path} changed type from ${types(drift.before)} to ${types(drift.after)} (first event ${drift.eventId})`;
  }
}

/** "; rules reading it: a, b; transforms that may: c" (empty when none). */
export function describeRulesTouched(touched: RulesTouched): string {
  const parts: string[] = [];
  if (touched.where.length > 0) parts.push(`rules whose where reads it: ${touched.where.join(', ')}`);
  if (touched.transform.length > 0) parts.push(`transforms that may read it: ${touched.transform.join(', ')}`);
  return parts.length > 0 ? `; ${parts.join('; ')}` : '';
}
