import { hasEnvReferences } from './env-references.js';
import { SENSITIVE_HEADER } from './describe-rule.js';
import type { KeptRuleSet } from '../store/rule-set-store.js';
import type { RuleDefinition } from './schema.js';
import type { CompiledRule, KeptRule, RuleSet } from './types.js';

/** What keeps a rule (`KeptRule`, rules/types.ts): literal secrets become LITERAL_SECRET. */
export const LITERAL_SECRET = '[literal secret: not kept]';

export function keptRuleOf(def: RuleDefinition, location: { file: string; line: number }): KeptRule {
  const definition = structuredClone(def) as RuleDefinition;
  if (definition.sign.scheme !== 'none' && !hasEnvReferences(definition.sign.secret)) definition.sign.secret = LITERAL_SECRET;
  for (const [name, value] of Object.entries(definition.to.headers ?? {})) {
    if (SENSITIVE_HEADER.test(name) && !hasEnvReferences(value)) definition.to.headers![name] = LITERAL_SECRET;
  }
  return { id: def.id, file: location.file, line: location.line, definition: definition as unknown as Record<string, unknown> };
}

/** What the store keeps of a loaded rule set. */
export function keptRuleSetOf(ruleSet: RuleSet): KeptRuleSet {
  return { hash: ruleSet.hash, kind: 'loaded', rules: ruleSet.rules.map((rule) => rule.kept), firstLoadedAt: ruleSet.loadedAt.getTime() };
}

/** Reads back what `keptRuleOf` wrote; anything else (a hand-edited row) is skipped. */
export function asKeptRules(values: readonly unknown[]): KeptRule[] {
  return values.filter((value): value is KeptRule => {
    const rule = value as Partial<KeptRule> | null;
    return typeof rule === 'object' && rule !== null && typeof rule.id === 'string' && typeof rule.definition === 'object' && rule.definition !== null;
  });
}

export type LiteralSecretFill = { ok: true; definition: Record<string, unknown> } | { ok: false; message: string };

/**
 * The kept definition with its literal secrets taken from today's version of the rule (`current`), where
 * that version has a literal secret in the same place; otherwise the version cannot be sent.
 */
export function fillLiteralSecrets(kept: KeptRule, current: CompiledRule | undefined): LiteralSecretFill {
  const definition = structuredClone(kept.definition) as unknown as RuleDefinition;
  const currentDef = current?.kept.definition as unknown as RuleDefinition | undefined;
  const missing = (where: string): LiteralSecretFill => ({
    ok: false,
    message: `${where} of rule "${kept.id}" was written literally in its file and is not kept; today's rule has no literal value there (write it as \${ENV})`,
  });
  if (definition.sign.scheme !== 'none' && definition.sign.secret === LITERAL_SECRET) {
    if (!current || currentDef?.sign.scheme === 'none' || currentDef?.sign.secret !== LITERAL_SECRET || current.signing.scheme === 'none') return missing('the signing secret');
    definition.sign.secret = current.signing.secret;
  }
  for (const [name, value] of Object.entries(definition.to.headers ?? {})) {
    if (value !== LITERAL_SECRET) continue;
    const today = current?.destination.headers[name];
    if (today === undefined || currentDef?.to.headers?.[name] !== LITERAL_SECRET) return missing(`header ${name}`);
    definition.to.headers![name] = today;
  }
  return { ok: true, definition: definition as unknown as Record<string, unknown> };
}
