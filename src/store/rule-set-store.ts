/**
 * Rule sets kept by their hash, so any node sends a delivery with the rule version it was planned with.
 */
export interface RuleSetStore {
  /** Keeps a rule set by its hash; a hash already kept is left as it is. Resolves after the commit. */
  saveRuleSet(ruleSet: KeptRuleSet): Promise<void>;
  getRuleSet(hash: string): Promise<KeptRuleSet | null>;
}

/** Whether a kept rule set came from the rule files, or is a single destination an operator sent an edited event to. */
export type RuleSetKind = 'loaded' | 'one-off';

/**
 * A rule set as kept by its hash, so any node can send a delivery with the rule version it was planned with.
 * `rules` are the rules as written in their files (`${ENV}` references unresolved, literal secrets left
 * out), opaque to the store: it keeps and returns them as JSON.
 */
export interface KeptRuleSet {
  hash: string;
  kind: RuleSetKind;
  rules: unknown[];
  /** When this hash was first kept; saving it again keeps the first time. */
  firstLoadedAt: number;
}
