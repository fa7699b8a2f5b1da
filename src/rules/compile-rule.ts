import { inspect } from 'node:util';
import type { z } from 'zod';
import { parseDuration } from '../duration.js';
import { describeRule } from './describe-rule.js';
import type { Env } from './env-references.js';
import { keptRuleOf } from './kept-rules.js';
import { compileMatcher } from './matcher.js';
import type { PathSegment } from './query-validation.js';
import { resolveRuleReferences } from './resolve-secrets.js';
import { ruleSchema } from './schema.js';
import { compileTransform } from './transform.js';
import type { CompiledRule } from './types.js';

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

/** Validates one rule's plain value, compiles its filter and transform, and resolves its references. */
export function compileRule(value: unknown, location: { file: string; line: number }, env: Env): RuleCompilation {
  const parsed = ruleSchema.safeParse(value);
  if (!parsed.success) return { errors: parsed.error.issues.flatMap(fromZodIssue), warnings: [] };
  const def = parsed.data;

  const errors: RuleIssue[] = [];
  const matcher = compileMatcher(def);
  if (!matcher.ok) errors.push(...matcher.issues.map((issue) => ({ ...issue, path: ['where', ...issue.path] })));
  const transform = compileTransform(def.transform);
  if (!transform.ok) errors.push({ path: ['transform'], offset: transform.position, message: transform.message });
  const resolved = resolveRuleReferences(def, env);
  errors.push(...resolved.errors);
  if (!matcher.ok || !transform.ok || errors.length > 0) return { errors, warnings: resolved.warnings };

  const durations = {
    timeoutMs: parseDuration(def.timeout),
    retryScheduleMs: def.retry.schedule.map((delay) => parseDuration(delay)),
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
    destination: { url: resolved.url, method: def.to.method, headers: resolved.headers },
    signing: resolved.signing,
    ...durations,
    retryOn: def.retry.retryOn,
    ...(def.concurrency !== undefined && { concurrency: def.concurrency }),
    ...(def.rateLimit !== undefined && { rateLimitPerSecond: def.rateLimit.perSecond }),
    hasTransform: transform.transform.hasTransform,
    matches: matcher.matcher.matches,
    explainMismatch: matcher.matcher.explainMismatch,
    render: transform.transform.render,
    describe,
    kept: keptRuleOf(def, location),
  };
  hideSecretsFromSerialisers(rule, describe);
  return { rule: freezeRule(rule), errors: [], warnings: resolved.warnings };
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
  Object.freeze(rule.destination);
  Object.freeze(rule.signing);
  Object.freeze(rule.on);
  Object.freeze(rule.retryScheduleMs);
  Object.freeze(rule.retryOn);
  Object.freeze(rule.kept);
  return Object.freeze(rule);
}

function fromZodIssue(issue: z.core.$ZodIssue): RuleIssue[] {
  const path = issue.path.filter((segment): segment is PathSegment => typeof segment !== 'symbol');
  if (issue.code === 'unrecognized_keys') {
    return issue.keys.map((key) => ({ path, key, message: `unknown key "${key}"` }));
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
