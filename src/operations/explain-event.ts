import { HookrelayError } from '../errors.js';
import { parseJsonBody } from '../ingest/parse-json.js';
import { explainRules, type CheckDestination, type RuleExplanation } from '../rules/explain.js';
import type { RuleEventInput, RuleSet } from '../rules/types.js';
import type { EventStore } from '../store/event-store.js';
import type { OutboxStore } from '../store/outbox-store.js';

/**
 * Explain: why every rule of the loaded rule set does or does not take one event (a stored one, or a
 * body from a file), and what each matching rule would send. The admin API, the console and the CLI
 * all answer with this. Nothing is stored or sent.
 */

export interface EventExplanation {
  /** The rule set the explanation was computed with: the one loaded now. */
  ruleSetHash: string;
  /** `id` is null for a body that is not stored (a file). */
  event: { id: number | null; source: string; event: string };
  matchedRuleIds: string[];
  /** The rule sets the event's stored deliveries were planned under, in the order first used. */
  plannedUnder: string[];
  /** Set when a stored delivery was planned under another rule set than the one explained with. */
  ruleSetNote: string | null;
  rules: RuleExplanation[];
}

export interface ExplainParts {
  ruleSet: RuleSet;
  /** The SSRF guard's decision on each matching rule's destination; without it they are not judged. */
  checkDestination?: CheckDestination;
  now?: () => number;
}

export interface ExplainRequest {
  /** Only this rule (404 when the rule set has none by that id). */
  ruleId?: string;
}

const DELIVERY_PAGE = 500;

export async function explainStoredEvent(store: EventStore & OutboxStore, parts: ExplainParts, eventId: number, request: ExplainRequest = {}): Promise<EventExplanation> {
  const event = await store.getEvent(eventId);
  if (!event) throw new HookrelayError('not_found', `No event ${eventId}.`);
  const input = { source: event.source, event: event.event, body: parseJsonBody(event.body), raw: event.body };
  const plannedUnder = await ruleSetsOfDeliveries(store, eventId);
  return explain(parts, input, request, { id: eventId, plannedUnder });
}

/** A body that is not stored (`events explain --file`): the event name is read from its `event` field. */
export async function explainBody(parts: ExplainParts, raw: Buffer, source: string, request: ExplainRequest = {}): Promise<EventExplanation> {
  const body = parseJsonBody(raw);
  const name = (body as { event?: unknown } | null)?.event;
  return explain(parts, { source, event: typeof name === 'string' ? name : '', body, raw }, request, { id: null, plannedUnder: [] });
}

async function explain(parts: ExplainParts, input: RuleEventInput, request: ExplainRequest, stored: { id: number | null; plannedUnder: string[] }): Promise<EventExplanation> {
  const { ruleSet } = parts;
  if (request.ruleId !== undefined && !ruleSet.rules.some((rule) => rule.id === request.ruleId)) {
    throw new HookrelayError('not_found', `No rule "${request.ruleId}" in the current rule set.`, { ruleId: request.ruleId });
  }
  const rules = await explainRules(ruleSet, input, {
    ...(request.ruleId !== undefined && { ruleId: request.ruleId }),
    ...(parts.checkDestination && { checkDestination: parts.checkDestination }),
    now: new Date((parts.now ?? Date.now)()),
  });
  const others = stored.plannedUnder.filter((hash) => hash !== ruleSet.hash);
  return {
    ruleSetHash: ruleSet.hash,
    event: { id: stored.id, source: input.source, event: input.event },
    matchedRuleIds: rules.filter((rule) => rule.matched).map((rule) => rule.ruleId),
    plannedUnder: stored.plannedUnder,
    ruleSetNote:
      others.length === 0
        ? null
        : `The event's stored deliveries were planned under rule set ${others.join(', ')}, not the current ${ruleSet.hash}: what was sent then may differ from this explanation.`,
    rules,
  };
}

/** Distinct rule-set hashes of the event's deliveries, oldest delivery first. */
async function ruleSetsOfDeliveries(store: OutboxStore, eventId: number): Promise<string[]> {
  const hashes: string[] = [];
  let before: number | undefined;
  do {
    const page = await store.listDeliveries({ eventId }, { limit: DELIVERY_PAGE, ...(before !== undefined && { before }) });
    hashes.push(...page.items.map((delivery) => delivery.ruleSetHash));
    before = page.nextCursor ?? undefined;
  } while (before !== undefined);
  return [...new Set(hashes.reverse())];
}
