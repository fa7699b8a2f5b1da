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
 * no longer has.
 */
export function compileKeptRule(kept: KeptRule, env: Env, current: CompiledRule | undefined): KeptRuleCompilation {
  const filled = fillLiteralSecrets(kept, current);
  if (!filled.ok) return filled;
  const compiled = compileRule(filled.definition, { file: kept.file, line: kept.line }, env);
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

/** A whole kept rule set compiled for planning (replay with `original` routing). */
export function compileKeptRuleSet(hash: string, rules: readonly unknown[], env: Env, current: RuleSet, firstLoadedAt: number): KeptRuleSetCompilation {
  const today = new Map(current.rules.map((rule) => [rule.id, rule]));
  const compiled: CompiledRule[] = [];
  const problems = new Map<string, string>();
  for (const kept of asKeptRules(rules)) {
    const result = compileKeptRule(kept, env, today.get(kept.id));
    if (result.ok) compiled.push(result.rule);
    else problems.set(kept.id, result.message);
  }
  return { ruleSet: { rules: compiled, hash, loadedAt: new Date(firstLoadedAt), files: [...new Set(compiled.map((rule) => rule.file))] }, problems };
}
