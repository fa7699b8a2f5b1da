import { parseJsonBody } from '../ingest/parse-json.js';
import type { RuleEventInput } from '../rules/types.js';
import type { EventBody } from '../store/event-store.js';

/** What the rules see of a stored event: the same input ingest gave them (throws invalid_json for a body that is not JSON). */
export function ruleInputOf(event: Omit<EventBody, 'id'>): RuleEventInput {
  return { source: event.source, event: event.event, body: parseJsonBody(event.body), raw: event.body };
}
