import { inspect } from 'node:util';
import type { z } from 'zod';
import { parseDuration } from '../duration.js';
import { describeRule, redriveChoice } from './describe-rule.js';
import type { Env } from './env-references.js';
import { keptRuleOf } from './kept-rules.js';
import { compileMatcher, type MatchCriteria } from './matcher.js';
import { allowedKeysAt, didYouMean } from './near-key.js';
import type { PathSegment } from './query-validation.js';
import { resolveRuleReferences, type ReferencedParts } from './resolve-secrets.js';
import { ruleSchema, type RuleDefinition } from './schema.js';
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

/**
 * Validates one rule's plain value, compiles its filter and transform, and resolves its references.
 * Every problem is reported at once: when the shape is wrong somewhere, the parts whose own shape holds
 * are still compiled and resolved, so a bad URL is not hidden behind a misspelt key.
 */
export function compileRule(value: unknown, location: { file: string; line: number }, env: Env): RuleCompilation {
  const parsed = ruleSchema.safeParse(value);
  if (!parsed.success) {
    const shapeErrors = parsed.error.issues.flatMap((issue) => fromZodIssue(issue, value));
    const parts = compileParts(wellFormedParts(value), env);
    return { errors: [...shapeErrors, ...parts.errors], warnings: parts.warnings };
  }
  const def = parsed.data;

  const { matcher, transform, resolved, errors, warnings } = compileParts({ match: def, transform: def.transform, references: def }, env);
  if (!matcher?.ok || !transform?.ok || !resolved || errors.length > 0) return { errors, warnings };

  const durations = {
    timeoutMs: parseDuration(def.timeout),
    retryScheduleMs: def.retry.schedule.map((delay) => parseDuration(delay)),
    ...(def.order !== undefined && { order: ruleOrderOf(def.order) }),
  };
  const describe = () => describeRule(def, location, durations);
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
  };
  hideSecretsFromSerialisers(rule, describe);
  return { rule: freezeRule(rule), errors: [], warnings };
}

function ruleOrderOf(order: NonNullable<RuleDefinition['order']>): RuleOrder {
  return {
    key: order.key,
    ...(order.maxBlockedFor !== undefined && { maxBlockedForMs: parseDuration(order.maxBlockedFor) }),
    onBlockedTimeout: order.onBlockedTimeout,
  };
}

interface RuleParts {
  match?: MatchCriteria;
  transform?: string | undefined;
  references?: ReferencedParts;
}

/** The checks that need a compiler or the environment, on each part given. */
function compileParts(parts: RuleParts, env: Env) {
  const errors: RuleIssue[] = [];
  const matcher = parts.match && compileMatcher(parts.match);
  if (matcher && !matcher.ok) errors.push(...matcher.issues.map((issue) => ({ ...issue, path: ['where', ...issue.path] })));
  const transform = 'transform' in parts ? compileTransform(parts.transform) : undefined;
  if (transform && !transform.ok) errors.push({ path: ['transform'], offset: transform.position, message: transform.message });
  const resolved = parts.references && resolveRuleReferences(parts.references, env);
  errors.push(...(resolved?.errors ?? []));
  return { matcher, transform, resolved, errors, warnings: resolved?.warnings ?? [] };
}

/** The parts of an invalid rule whose own shape holds (the matcher sees `where` alone: only its issues count). */
function wellFormedParts(value: unknown): RuleParts {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return {};
  const shape = ruleSchema.shape;
  const raw = value as Record<string, unknown>;
  const where = shape.where.safeParse(raw.where);
  const transform = shape.transform.safeParse(raw.transform);
  // Unknown keys under `to` are already reported; its URL and headers are still worth checking.
  const to = shape.to.strip().safeParse(raw.to);
  const sign = shape.sign.safeParse(raw.sign);
  const enabled = shape.enabled.safeParse(raw.enabled).data ?? true;
  return {
    ...(where.success && { match: { on: [], where: where.data, enabled } }),
    ...(transform.success && { transform: transform.data }),
    ...(to.success && { references: { to: to.data, sign: sign.data ?? { scheme: 'none' }, enabled } }),
  };
}

/**
 * The rule object carries resolved secrets for the delivery worker. JSON.stringify (pino included) and
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

function fromZodIssue(issue: z.core.$ZodIssue, value: unknown): RuleIssue[] {
  const path = issue.path.filter((segment): segment is PathSegment => typeof segment !== 'symbol');
  if (issue.code === 'unrecognized_keys') {
    const allowed = allowedKeysAt(ruleSchema, value, path);
    return issue.keys.map((key) => ({ path, key, message: `unknown key "${key}"${didYouMean(key, allowed)}` }));
  }
  if (issue.code === 'invalid_key') {
    // zod's own message is only "Invalid key in record"; the nested issue says what is wrong with it.
    return [{ path, message: `header name ${issue.issues[0]?.message ?? issue.message}` }];
  }
  if (issue.code === 'invalid_type' && / received undefined$/.test(issue.message)) {
    return [{ path, message: 'is required' }];
  }
  return [{ path, message: issue.message }];
}
