import { compileRule } from './compile-rule.js';
import type { Env } from './env-references.js';
import { asKeptRules, fillLiteralSecrets } from './kept-rules.js';
import type { KeptRule } from './types.js';
import type { CompiledRule, RuleSet } from './types.js';

/** A kept rule version compiled on this node, or why it cannot be sent from here. */
export type KeptRuleCompilation = { ok: true; rule: CompiledRule } | { ok: false; message: string };

/**
 * Compiles one kept rule version with this node's environment. `current` is today's rule of the same id
 * (the source of literal secrets, which are never kept). A version that compiled where it was loaded can
 * fail here only for what the sending node lacks: an unset `${ENV}` variable, a literal secret today's rule
 * no longer has. A regex an older version accepted and the linear-time engine cannot run does not fail
 * it: its deliveries were planned (filtered, rendered) when it was loaded, and are sent; the rule says
 * why it cannot be evaluated again (`unavailable`).
 */
export function compileKeptRule(kept: KeptRule, env: Env, current: CompiledRule | undefined): KeptRuleCompilation {
  const filled = fillLiteralSecrets(kept, current);
  if (!filled.ok) return filled;
  const compiled = compileRule(filled.definition, { file: kept.file, line: kept.line }, env, 'kept');
  if (compiled.rule) return { ok: true, rule: compiled.rule };
  const problems = compiled.errors.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ');
  return { ok: false, message: `rule "${kept.id}" of this version cannot be compiled on this node: ${problems}` };
}

export interface KeptRuleSetCompilation {
  /** The versions that compiled, as a rule set under the kept hash (rule-set order). */
  ruleSet: RuleSet;
  /** Versions that cannot be used from this node, by rule id. */
  problems: Map<string, string>;
}

/**
 * A whole kept rule set compiled for planning (replay with `original` routing). A rule that cannot be
 * evaluated here (`unavailable`) is left out of the set and reported: planning would have to run it.
 */
export function compileKeptRuleSet(hash: string, rules: readonly unknown[], env: Env, current: RuleSet, firstLoadedAt: number): KeptRuleSetCompilation {
  const today = new Map(current.rules.map((rule) => [rule.id, rule]));
  const compiled: CompiledRule[] = [];
  const problems = new Map<string, string>();
  for (const kept of asKeptRules(rules)) {
    const result = compileKeptRule(kept, env, today.get(kept.id));
    if (!result.ok) problems.set(kept.id, result.message);
    else if (result.rule.unavailable !== undefined) problems.set(kept.id, `rule "${kept.id}" of this version cannot be evaluated: ${result.rule.unavailable}`);
    else compiled.push(result.rule);
  }
  return { ruleSet: { rules: compiled, hash, loadedAt: new Date(firstLoadedAt), files: [...new Set(compiled.map((rule) => rule.file))] }, problems };
}
