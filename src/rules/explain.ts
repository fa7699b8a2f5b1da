import { deliveryHeaders } from '../signing/delivery-headers.js';
import { preview } from './matcher.js';
import { compileQueryPlan, explainQuery, type ClauseExplanation, type QueryPlan } from './explain-query.js';
import { renderOutcome } from './render-outcome.js';
import type { CompiledRule, RuleEventInput, RuleSet } from './types.js';

/**
 * Why each rule matches one event or not, clause by clause (`on`, `source`, every `where` clause with
 * the value found), and for a rule that matches what it would send: the body after the transform, the
 * headers and the signature. Nothing is sent. Secrets stay hidden: headers, URL and signing are shown as
 * the rule describes itself (`${ENV}` references unresolved, literal secrets and URL credentials
 * redacted); only the signature is computed, with the real secret, over the real body.
 */

export type { ClauseExplanation } from './explain-query.js';

/** The SSRF guard's verdict on a destination, or why it was not asked. */
export type DestinationVerdict =
  | { checked: true; allowed: true; addresses: string[] }
  | { checked: true; allowed: false; reason: string }
  | { checked: false; reason: string };

export type CheckDestination = (url: string) => Promise<DestinationVerdict>;

export interface OutgoingPreview {
  method: string;
  /** As written in the rule: `${ENV}` references unresolved, credentials redacted. */
  url: string;
  /** content-type, the rule's headers as written, and the delivery id and signature headers. */
  headers: Record<string, string>;
  contentType: string;
  /** The body as UTF-8 text: the transform's output, or the bytes received when the rule has none. */
  body: string;
  /** Set when the transform fails: the delivery would be stored dead-lettered with this reason. */
  deadReason?: string;
  /** Deprecated: the same as deadReason, kept for one release. */
  renderError?: string;
  /** Set when the body cannot be signed (standard-webhooks signs text: bytes that are not UTF-8). */
  signError?: string;
  signing: { scheme: string; header?: string; secret?: string };
}

export interface RuleExplanation {
  ruleId: string;
  description?: string;
  file: string;
  line: number;
  enabled: boolean;
  /** The matcher's verdict: enabled, and every clause passes. */
  matched: boolean;
  /** Every clause passes (true for a disabled rule that would match if enabled). */
  clausesPass: boolean;
  on: ClauseExplanation;
  source: ClauseExplanation;
  where: ClauseExplanation[];
  /** One line per failing clause, every one of them (not only the first). */
  failing: string[];
  /** Disabled, destination refused, transform failing: said in words. */
  notes: string[];
  /** For a rule whose clauses pass: what it would send. */
  outgoing?: OutgoingPreview;
  /** For a rule whose clauses pass, when a destination check was given. */
  destination?: DestinationVerdict;
}

export interface ExplainOptions {
  /** Only this rule (the caller checks it exists). */
  ruleId?: string;
  /** The SSRF guard's decision on a URL; without it destinations are not judged. */
  checkDestination?: CheckDestination;
  /** Time the signature is made for (standard-webhooks signs a timestamp). */
  now?: Date;
}

/** The delivery id a preview is signed with; a real delivery carries `dlv_<id>`. */
export const PREVIEW_DELIVERY_ID = 'dlv_preview';

const plans = new WeakMap<CompiledRule, QueryPlan>();

/** The rule's `where` as a clause tree, compiled the first time the rule is explained. */
function planOf(rule: CompiledRule): QueryPlan {
  let plan = plans.get(rule);
  if (!plan) plans.set(rule, (plan = compileQueryPlan(rule.describe().where)));
  return plan;
}

export async function explainRules(ruleSet: RuleSet, input: RuleEventInput, options: ExplainOptions = {}): Promise<RuleExplanation[]> {
  const rules = options.ruleId === undefined ? ruleSet.rules : ruleSet.rules.filter((rule) => rule.id === options.ruleId);
  // Judging is synchronous; only the few rules whose clauses pass need the (async) preview.
  const judged = rules.map((rule) => judgeRule(rule, input));
  await Promise.all(judged.map((explanation, i) => (explanation.clausesPass ? addPreview(explanation, rules[i]!, input, options) : undefined)));
  return judged;
}

export async function explainRule(rule: CompiledRule, input: RuleEventInput, options: ExplainOptions = {}): Promise<RuleExplanation> {
  const explanation = judgeRule(rule, input);
  if (explanation.clausesPass) await addPreview(explanation, rule, input, options);
  return explanation;
}

/** Every clause of one rule judged on the event; no preview yet. */
function judgeRule(rule: CompiledRule, input: RuleEventInput): RuleExplanation {
  const on: ClauseExplanation = { path: 'event', operator: '$in', expected: rule.on, found: input.event, pass: rule.on.includes('*') || rule.on.includes(input.event) };
  const source: ClauseExplanation =
    rule.source === undefined
      ? { path: 'source', operator: 'any', found: input.source, pass: true }
      : { path: 'source', operator: '$eq', expected: rule.source, found: input.source, pass: rule.source === input.source };
  const where = explainQuery(planOf(rule), input.body);
  const clausesPass = on.pass && source.pass && where.pass;
  // Agrees with the matcher by construction (the same sift queries, clause by clause); a property test checks it.
  const failing = [on, source, ...where.clauses].filter((clause) => !clause.pass).map(clauseSummary);

  const explanation: RuleExplanation = {
    ruleId: rule.id,
    ...(rule.description !== undefined && { description: rule.description }),
    file: rule.file,
    line: rule.line,
    enabled: rule.enabled,
    matched: rule.enabled && clausesPass,
    clausesPass,
    on,
    source,
    where: where.clauses,
    failing,
    notes: [],
  };
  if (!rule.enabled) explanation.notes.push(clausesPass ? 'the rule is disabled; it would match if it were enabled' : 'the rule is disabled');
  return explanation;
}

/** What a rule whose clauses pass would send, and the network guard's word on where. */
async function addPreview(explanation: RuleExplanation, rule: CompiledRule, input: RuleEventInput, options: ExplainOptions): Promise<void> {
  explanation.outgoing = await previewOutgoing(rule, input, options.now ?? new Date());
  const { deadReason, signError } = explanation.outgoing;
  if (deadReason !== undefined) explanation.notes.push(`the transform fails, so the delivery would be dead-lettered: ${deadReason}`);
  if (signError !== undefined) explanation.notes.push(`the body cannot be signed: ${signError}`);
  if (!options.checkDestination) return;
  explanation.destination = await options.checkDestination(rule.destination.url);
  if (explanation.destination.checked && !explanation.destination.allowed) {
    explanation.notes.push(`the network guard refuses the destination (${explanation.destination.reason}): the delivery would be dead-lettered`);
  } else if (!explanation.destination.checked) {
    explanation.notes.push(`the destination was not checked: ${explanation.destination.reason}`);
  }
}

async function previewOutgoing(rule: CompiledRule, input: RuleEventInput, now: Date): Promise<OutgoingPreview> {
  const description = rule.describe();
  const { body, contentType, deadReason } = await renderOutcome(rule, input);
  let signature: Record<string, string> = {};
  let signError: string | undefined;
  try {
    signature = deliveryHeaders({ signing: rule.signing, deliveryId: PREVIEW_DELIVERY_ID, ruleId: rule.id, timestamp: now, body });
  } catch (err) {
    signError = (err as Error).message;
  }
  return {
    method: description.to.method,
    url: description.to.url,
    headers: { 'content-type': contentType, ...description.to.headers, ...signature },
    contentType,
    body: body.toString('utf8'),
    ...(deadReason !== undefined && { deadReason, renderError: deadReason }),
    ...(signError !== undefined && { signError }),
    signing: description.sign,
  };
}

/** Why a rule does not take the event: every failing clause, then the notes (disabled), in one line. */
export function mismatchReason(rule: CompiledRule, input: RuleEventInput): string {
  const { failing, notes } = judgeRule(rule, input);
  return [...failing, ...notes].join('; ');
}

/** `where result.quantity $gt 1: found 1`, in one line. */
export function clauseSummary(clause: ClauseExplanation): string {
  return clause.path === 'event' || clause.path === 'source' ? clauseText(clause) : `where ${clauseText(clause)}`;
}

/** `result.quantity $gt 1: found 1`: the path, operator, expected value and what was found. */
export function clauseText(clause: ClauseExplanation): string {
  const expected = clause.expected === undefined ? '' : ` ${preview(clause.expected)}`;
  const found = clause.found === undefined && !clause.absent ? '' : `: ${foundText(clause)}`;
  return `${clause.path === undefined ? '' : `${clause.path} `}${clause.operator}${expected}${found}`;
}

export function foundText(clause: ClauseExplanation): string {
  return clause.absent ? 'absent' : `found ${preview(clause.found)}`;
}
