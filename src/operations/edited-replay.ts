import { createHash } from 'node:crypto';
import type { OperationsContext } from './context.js';
import { HookrelayError } from '../errors.js';
import { amountOf } from '../ingest/event-columns.js';
import { checkNesting, nestsDeeperThan } from '../ingest/nesting.js';
import { parseJsonBody } from '../ingest/parse-json.js';
import { DEFAULT_MAX_DEPTH, MAX_READABLE_DEPTH } from '../config.js';
import { validateEvent, type SchemaIssue } from '../ingest/validate-event.js';
import { mismatchReason } from '../rules/explain.js';
import { compileKeptRuleSet } from '../rules/kept-rule-set.js';
import { keptRuleOf } from '../rules/kept-rules.js';
import { ruleSchema } from '../rules/schema.js';
import type { RuleEventInput } from '../rules/types.js';
import type { EditVia, StoredEvent, Validation } from '../store/event-store.js';
import type { Delivery } from '../store/outbox-store.js';
import type { KeptRuleSet } from '../store/rule-set-store.js';
import { diffJson, type JsonChange } from './json-diff.js';
import type { Routing } from './replay-routing.js';
import { planRoutedReplay, type PlannedSend } from './routed-replay.js';

/** Where an edited body goes: through today's rules, through one rule (filter or not), or to a URL. */
export type EditTarget = { kind: 'rules' } | { kind: 'rule'; ruleId: string } | { kind: 'url'; url: string };

/** The target named by a request's `ruleId` or `to` (neither: today's rules). */
export function editTargetOf(request: { ruleId?: string; to?: string }): EditTarget {
  if (request.to !== undefined) return { kind: 'url', url: request.to };
  return request.ruleId !== undefined ? { kind: 'rule', ruleId: request.ruleId } : { kind: 'rules' };
}

export interface EditedReplayRequest {
  /** The edited body, exactly as it is to be stored and sent. */
  body: Buffer;
  /** Store and send a body that fails the event schema (QA tests exactly that); it is stored marked invalid. */
  meantInvalid?: boolean;
  target: EditTarget;
  via: EditVia;
  /**
   * Check and plan only: nothing is stored or sent, and a body failing the event schema is answered with
   * its issues instead of refused (the console checks each edit this way as it is typed).
   */
  dryRun?: boolean;
}

export interface EditedReplayAnswer {
  /** The edited copy: a new event linked to its original; null on a dry run. */
  copy: StoredEvent | null;
  dryRun: boolean;
  /** Where the edited body fails the event schema (empty when it passes). */
  issues: SchemaIssue[];
  /** What changed from the stored original. */
  changes: JsonChange[];
  /** Set when the chosen rule's filter does not match the edited body: it was applied anyway, and this says why it does not match. */
  appliedWithoutMatch: string | null;
  ruleSetHash: string;
  planned: PlannedSend[];
  created: Delivery[];
}

/** The single rule of a one-off set that sends an edited event to a URL: the raw bytes, unsigned. */
const TO_URL_RULE_ID = 'to-url';

const stringOrNull = (value: unknown): string | null => (typeof value === 'string' && value.length > 0 ? value : null);

/**
 * Checks the edited body the way ingest checks a webhook (JSON, then the event schema). A body failing the
 * schema is refused with the schema's issues, unless it is meant to be invalid.
 */
function validateEdit(body: Buffer, acceptInvalid: boolean, maxDepth: number): { parsed: unknown; validation: Validation; issues: SchemaIssue[] } {
  const parsed = parseJsonBody(body);
  checkNesting(body, maxDepth);
  try {
    return { parsed, validation: validateEvent(parsed).validation, issues: [] };
  } catch (err) {
    if (!acceptInvalid || !(err instanceof HookrelayError) || err.code !== 'invalid_payload') throw err;
    return { parsed, validation: 'invalid', issues: (err.details as { issues: SchemaIssue[] }).issues };
  }
}

/** A one-off rule set holding one rule that sends to `url`, kept like any rule set so the worker sends it as kept. */
async function oneOffRouting(ctx: OperationsContext, url: string, keep: boolean): Promise<Routing> {
  const checked = ruleSchema.safeParse({ id: TO_URL_RULE_ID, on: ['*'], to: { url } });
  if (!checked.success) throw new HookrelayError('validation_failed', `Cannot send to this URL: ${checked.error.issues[0]?.message}`, { url });
  const rules = [keptRuleOf(checked.data, { file: '(edited event sent to a URL)', line: 1 })];
  const hash = `url-${createHash('sha256').update(JSON.stringify(rules)).digest('hex').slice(0, 12)}`;
  const kept: KeptRuleSet = { hash, kind: 'one-off', rules, firstLoadedAt: ctx.now() };
  const { ruleSet, problems } = compileKeptRuleSet(hash, rules, ctx.env, ctx.rules.current(), kept.firstLoadedAt);
  if (problems.size > 0) throw new HookrelayError('validation_failed', `Cannot send to this URL: ${[...problems.values()].join('; ')}`, { url });
  if (keep) await ctx.store.saveRuleSet(kept);
  return { mode: 'current', ruleSet, withheld: new Map() };
}

/**
 * Edit and replay: the edited body is stored as a new event linked to its original (which is never
 * changed), then sent through today's rules, through one chosen rule (even if its filter does not
 * match: the answer says so), or to a URL (a delivery like any other, through the network guard).
 * Deliveries are signed by the rule's own signing; the original sender's signature is never carried.
 */
export async function replayEdited(ctx: OperationsContext, eventId: number, request: EditedReplayRequest): Promise<EditedReplayAnswer> {
  const original = await ctx.store.getEvent(eventId);
  if (!original) throw new HookrelayError('not_found', `No event ${eventId}.`);
  const dryRun = request.dryRun ?? false;
  const { parsed, validation, issues } = validateEdit(request.body, dryRun || (request.meantInvalid ?? false), ctx.maxDepth ?? DEFAULT_MAX_DEPTH);
  const fields = (typeof parsed === 'object' && parsed !== null ? parsed : {}) as { event?: unknown; result?: Record<string, unknown> };
  const result = typeof fields.result === 'object' && fields.result !== null ? fields.result : {};
  const event = stringOrNull(fields.event) ?? original.event;
  const input: RuleEventInput = { source: original.source, event, body: parsed, raw: request.body };

  let routing: Routing;
  let appliedWithoutMatch: string | null = null;
  if (request.target.kind === 'url') {
    routing = await oneOffRouting(ctx, request.target.url, !dryRun);
  } else {
    routing = { mode: 'current', ruleSet: ctx.rules.current(), withheld: new Map() };
    if (request.target.kind === 'rule') {
      const { ruleId } = request.target;
      const rule = routing.ruleSet.rules.find((r) => r.id === ruleId);
      if (!rule) throw new HookrelayError('not_found', `No rule "${ruleId}" in the current rule set.`, { ruleId });
      if (!rule.enabled) throw new HookrelayError('conflict', `Rule "${ruleId}" is disabled: its deliveries would be held. Enable it first.`, { ruleId });
      if (!rule.matches(input)) appliedWithoutMatch = mismatchReason(rule, input);
    }
  }
  const ruleId = request.target.kind === 'rule' ? request.target.ruleId : undefined;
  const { deliveries, sends } = await planRoutedReplay(routing, input, { ...(ruleId !== undefined && { ruleId, force: true }) });
  const changes = diffJson(parseOrUndefined(original.body), parsed);
  const plan = { dryRun, issues, changes, appliedWithoutMatch, ruleSetHash: routing.ruleSet.hash, planned: sends };
  if (dryRun) return { ...plan, copy: null, created: [] };

  const editedAt = ctx.now();
  const copyId = await ctx.store.saveEditedCopy({
    source: original.source,
    event,
    // The copy is of this transfer: it keeps the original's transfer id whatever the edit did to result.id.
    transferId: original.transferId,
    checkoutId: stringOrNull(result.checkoutId),
    email: stringOrNull(result.email),
    walletAddress: stringOrNull(result.walletAddress),
    totalPriceUsd: amountOf(result),
    validation,
    // No received headers: the original sender's signature never travels with an edited body.
    headers: { 'content-type': 'application/json' },
    body: request.body,
    ruleSetHash: routing.ruleSet.hash,
    deliveries,
    editedFrom: original.id,
    editedAt,
    via: request.via,
  });
  const copy = (await ctx.store.getEvent(copyId))!;
  const page = await ctx.store.listDeliveries({ eventId: copyId }, { limit: 500 });
  return { ...plan, copy, created: page.items.reverse() };
}

/** A stored body as JSON, if it is JSON a reader can walk (one stored before the nesting limit may not be). */
function parseOrUndefined(body: Buffer): unknown {
  if (nestsDeeperThan(body, MAX_READABLE_DEPTH)) return undefined;
  try {
    return parseJsonBody(body);
  } catch {
    return undefined;
  }
}
