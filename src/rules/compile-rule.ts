import type { z } from 'zod';
import { buildRule, compileParts, type RuleCompilation, type RuleIssue, type RuleParts } from './build-rule.js';
import { didYouMean, nearest, type PathSegment } from './did-you-mean.js';
import type { Env } from './env-references.js';
import { isMissingAt } from '../missing-field.js';
import { allowedKeysAt } from './near-key.js';
import type { RegexMode } from './regex-engine.js';
import { ruleSchema } from './schema.js';

/**
 * Validates one rule's plain value, compiles its filter and transform, and resolves its references.
 * Every problem is reported at once: when the shape is wrong somewhere, the parts whose own shape holds
 * are still compiled and resolved, so a bad URL is not hidden behind a misspelt key.
 */
export function compileRule(value: unknown, location: { file: string; line: number }, env: Env, regexes: RegexMode = 'new'): RuleCompilation {
  const parsed = ruleSchema.safeParse(value);
  if (parsed.success) return buildRule(parsed.data, location, env, regexes);

  // A misspelt top-level key (`wehre`) is checked as the key it is near (`where`), so the mistakes inside
  // it show in this run too; its problems keep the path as written.
  const misspelt = misspeltTopLevelKeys(value);
  if (misspelt.size === 0) return invalidRule(parsed.error.issues, value, env);
  const corrected = Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([key, field]) => [misspelt.get(key) ?? key, field]));
  const asWritten = new Map([...misspelt].map(([written, meant]) => [meant, written]));
  const { errors, warnings } = invalidRule(ruleSchema.safeParse(corrected).error?.issues ?? [], corrected, env);
  const unknown = [...misspelt].map(([written, meant]): RuleIssue => ({ path: [], key: written, message: `unknown key "${written}" (did you mean "${meant}"?)` }));
  const rename = (issue: RuleIssue): RuleIssue => {
    const [head, ...rest] = issue.path;
    const written = head === undefined ? undefined : asWritten.get(String(head));
    return written === undefined ? issue : { ...issue, path: [written, ...rest] };
  };
  return { errors: [...unknown, ...errors.map(rename)], warnings: warnings.map(rename) };
}

/** Every problem of a rule that does not match the schema: its shape, and the parts whose own shape holds. */
function invalidRule(issues: readonly z.core.$ZodIssue[], value: unknown, env: Env): RuleCompilation {
  const shapeErrors = issues.flatMap((issue) => fromZodIssue(issue, value));
  const parts = compileParts(wellFormedParts(value), env);
  return { errors: [...shapeErrors, ...parts.errors], warnings: parts.warnings };
}

/** Unknown top-level keys near a rule key the rule does not have: written name → rule key. */
function misspeltTopLevelKeys(value: unknown): Map<string, string> {
  const misspelt = new Map<string, string>();
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return misspelt;
  const present = new Set(Object.keys(value));
  for (const key of present) {
    if (RULE_KEYS.includes(key)) continue;
    const meant = nearest(key, RULE_KEYS);
    if (meant !== undefined && !present.has(meant) && ![...misspelt.values()].includes(meant)) misspelt.set(key, meant);
  }
  return misspelt;
}

const RULE_KEYS = Object.keys(ruleSchema.shape);

/** A top-level key of a rule, or one near enough to be a misspelling of one. */
export function isRuleKey(key: string): boolean {
  return RULE_KEYS.includes(key) || nearest(key, RULE_KEYS) !== undefined;
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
  if ((issue.code === 'invalid_type' || issue.code === 'invalid_union') && isMissingAt(value, issue.path)) {
    return [{ path, message: 'is required' }];
  }
  return [{ path, message: issue.message }];
}
