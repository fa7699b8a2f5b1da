import { inspect } from 'node:util';
import { parseDuration } from '../duration.js';
import { describeRule, redriveChoice } from './describe-rule.js';
import type { PathSegment } from './did-you-mean.js';
import type { Env } from './env-references.js';
import { keptRuleOf } from './kept-rules.js';
import { compileMatcher, type MatchCriteria } from './matcher.js';
import type { RegexMode } from './regex-engine.js';
import { resolveRuleReferences, type ReferencedParts } from './resolve-secrets.js';
import type { RuleDefinition } from './schema.js';
import { compileTransform } from './transform.js';
import type { CompiledRule, RuleOrder } from './types.js';

/** A problem in one rule, located by path (and optionally a key, or an offset inside a string value). */
export interface RuleIssue {
  path: PathSegment[];
  key?: PathSegment;
  /** Character offset inside the string at `path` (JSONata positions). */
  offset?: number;
  message: string;
}

export interface RuleCompilation {
  rule?: CompiledRule;
  errors: RuleIssue[];
  warnings: RuleIssue[];
}

/** The validated definition each built rule came from, literal secrets included (never serialised). */
const definitions = new WeakMap<CompiledRule, RuleDefinition>();

/** The definition `rule` was built from, to build it again elsewhere (another thread). */
export function definitionOf(rule: CompiledRule): RuleDefinition {
  const definition = definitions.get(rule);
  if (definition === undefined) throw new Error(`rule "${rule.id}" was not built by buildRule`);
  return definition;
}

/**
 * Compiles one rule already validated against the rule schema: its filter and transform, its references
 * resolved with `env`. No schema here: a thread that builds rules the receiver validated loads no zod.
 * `regexes` is `kept` for a rule version kept by hash (see RegexMode).
 */
export function buildRule(def: RuleDefinition, location: { file: string; line: number }, env: Env, regexes: RegexMode = 'new'): RuleCompilation {
  const { matcher, transform, resolved, errors, warnings } = compileParts({ match: def, transform: def.transform, references: def }, env, regexes);
  if (!matcher?.ok || !transform?.ok || !resolved || errors.length > 0) return { errors, warnings };

  const durations = {
    timeoutMs: parseDuration(def.timeout),
    retryScheduleMs: def.retry.schedule.map((delay) => parseDuration(delay)),
    ...(def.order !== undefined && { order: ruleOrderOf(def.order) }),
  };
  const describe = () => describeRule(def, location, durations);
  const unavailable = [matcher.unavailable, transform.unavailable].filter((reason) => reason !== undefined);
  const rule: CompiledRule = {
    id: def.id,
    ...(def.description !== undefined && { description: def.description }),
    file: location.file,
    line: location.line,
    on: def.on,
    ...(def.source !== undefined && { source: def.source }),
    enabled: def.enabled,
    destination: { url: resolved.url, method: def.to.method, headers: resolved.headers, forwardHeaders: def.to.forwardHeaders },
    signing: resolved.signing,
    ...durations,
    retryOn: def.retry.retryOn,
    ...(def.concurrency !== undefined && { concurrency: def.concurrency }),
    ...(def.rateLimit !== undefined && { rateLimitPerSecond: def.rateLimit.perSecond }),
    ...(def.redrive !== undefined && { redrive: redriveChoice(def.redrive) }),
    hasTransform: transform.transform.hasTransform,
    matches: matcher.matcher.matches,
    render: transform.transform.render,
    describe,
    kept: keptRuleOf(def, location),
    ...(unavailable.length > 0 && { unavailable: unavailable.join('; ') }),
  };
  hideSecretsFromSerialisers(rule, describe);
  definitions.set(rule, def);
  return { rule: freezeRule(rule), errors: [], warnings };
}

function ruleOrderOf(order: NonNullable<RuleDefinition['order']>): RuleOrder {
  return {
    key: order.key,
    ...(order.maxBlockedFor !== undefined && { maxBlockedForMs: parseDuration(order.maxBlockedFor) }),
    onBlockedTimeout: order.onBlockedTimeout,
  };
}

export interface RuleParts {
  match?: MatchCriteria;
  transform?: string | undefined;
  references?: ReferencedParts;
}

/** The checks that need a compiler or the environment, on each part given. */
export function compileParts(parts: RuleParts, env: Env, regexes: RegexMode = 'new') {
  const errors: RuleIssue[] = [];
  const matcher = parts.match && compileMatcher(parts.match, regexes);
  if (matcher && !matcher.ok) errors.push(...matcher.issues.map((issue) => ({ ...issue, path: ['where', ...issue.path] })));
  const transform = 'transform' in parts ? compileTransform(parts.transform, regexes) : undefined;
  if (transform && !transform.ok) errors.push({ path: ['transform'], offset: transform.position, message: transform.message });
  const resolved = parts.references && resolveRuleReferences(parts.references, env);
  errors.push(...(resolved?.errors ?? []));
  return { matcher, transform, resolved, errors, warnings: resolved?.warnings ?? [] };
}

/**
 * The rule object carries resolved secrets for the delivery loop. JSON.stringify (pino included) and
 * console.log/util.inspect show the safe description instead, so logging a rule cannot leak them.
 */
function hideSecretsFromSerialisers(rule: CompiledRule, describe: () => object): void {
  Object.defineProperty(rule, 'toJSON', { value: describe, enumerable: false });
  Object.defineProperty(rule, inspect.custom, { value: () => describe(), enumerable: false });
}

function freezeRule(rule: CompiledRule): CompiledRule {
  Object.freeze(rule.destination.headers);
  Object.freeze(rule.destination.forwardHeaders);
  Object.freeze(rule.destination);
  Object.freeze(rule.signing);
  Object.freeze(rule.on);
  Object.freeze(rule.retryScheduleMs);
  Object.freeze(rule.retryOn);
  Object.freeze(rule.kept);
  if (rule.order) Object.freeze(rule.order);
  return Object.freeze(rule);
}
