import { buildRule, definitionOf } from './build-rule.js';
import type { Env } from './env-references.js';
import type { RuleDefinition } from './schema.js';
import type { RuleSet } from './types.js';

/**
 * A loaded rule set as plain data, for the delivery thread. The thread builds the same rules from the
 * definitions the receiver read and validated: one reading of the files, and the thread loads neither the
 * YAML parser nor the schema.
 */
export interface RuleSetMessage {
  hash: string;
  loadedAt: number;
  files: string[];
  rules: Array<{ definition: RuleDefinition; file: string; line: number }>;
}

export function ruleSetMessageOf(ruleSet: RuleSet): RuleSetMessage {
  return {
    hash: ruleSet.hash,
    loadedAt: ruleSet.loadedAt.getTime(),
    files: ruleSet.files,
    rules: ruleSet.rules.map((rule) => ({ definition: definitionOf(rule), file: rule.file, line: rule.line })),
  };
}

/** Builds the rule set again; throws when a rule does not build, which it always does with the receiver's `env`. */
export function ruleSetFromMessage(message: RuleSetMessage, env: Env): RuleSet {
  const rules = message.rules.map(({ definition, file, line }) => {
    const built = buildRule(definition, { file, line }, env);
    if (built.rule === undefined) throw new Error(`rule "${definition.id}" (${file}:${line}) does not build: ${built.errors.map((issue) => issue.message).join('; ')}`);
    return built.rule;
  });
  return { hash: message.hash, loadedAt: new Date(message.loadedAt), files: message.files, rules };
}
