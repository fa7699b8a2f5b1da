import type { KeptRuleCompilation } from '../rules/kept-rule-set.js';
import { asKeptRules } from '../rules/kept-rules.js';
import type { KeptRule } from '../rules/types.js';
import { pauseReason } from './delivery-pauses.js';
import type { Env } from '../rules/env-references.js';
import type { CompiledRule, RuleSet } from '../rules/types.js';
import type { RuleSetKind, RuleSetStore } from '../store/rule-set-store.js';

/**
 * Which version of its rule a delivery is sent with, and whether it is sent now.
 * - The version it was planned with (the rule set named by its `ruleSetHash`, kept in the store): its
 *   destination, headers, signing, timeout and retry schedule, with `${ENV}` resolved on this node.
 * - Today's rule set decides whether it goes at all: a rule removed from it dead-letters the delivery
 *   ("rule removed"), a disabled rule holds it until the rule is enabled again, whatever version it has.
 * - A one-off set (an edited event sent to a URL) is not in the rule files: it is sent as kept.
 * - A set that was never kept (planned before rule sets were kept) is sent with today's version.
 */
export type RuleVersionLookup =
  | { action: 'send'; rule: CompiledRule }
  | { action: 'hold' }
  | { action: 'dead'; code: string; reason: string };

interface KeptSetEntry {
  kind: RuleSetKind;
  rules: Map<string, KeptRule>;
}

/**
 * A kept version is validated against the rule schema again (it may be older than this node's schema);
 * the schema's code loads on the first older version, not in every delivery thread.
 */
const keptRuleCompiler = () => import('../rules/kept-rule-set.js');
type KeptRuleCompiler = Awaited<ReturnType<typeof keptRuleCompiler>>['compileKeptRule'];

/** Kept sets and compiled versions held in memory: deliveries of a few older sets are usually all that is pending. */
const MAX_CACHED = 32;

export class RuleVersions {
  private readonly keptSets = new Map<string, KeptSetEntry | null>();
  private readonly compiled = new Map<string, RuleVersionLookup>();

  constructor(
    private readonly store: RuleSetStore,
    private readonly env: Env,
  ) {}

  /** Synchronous for a delivery planned with today's rule set (nearly all of them): no promise on the worker's hot path. */
  lookup(delivery: { ruleId: string; ruleSetHash: string }, today: RuleSet, todaysRule: CompiledRule | undefined): RuleVersionLookup | Promise<RuleVersionLookup> {
    if (delivery.ruleSetHash === today.hash) return decide(todaysRule, delivery.ruleId, () => ({ action: 'send', rule: todaysRule! }));
    return this.olderVersion(delivery, today, todaysRule);
  }

  private async olderVersion(delivery: { ruleId: string; ruleSetHash: string }, today: RuleSet, todaysRule: CompiledRule | undefined): Promise<RuleVersionLookup> {
    const [kept, { compileKeptRule }] = await Promise.all([this.keptSet(delivery.ruleSetHash), keptRuleCompiler()]);
    if (kept?.kind === 'one-off') return this.version(delivery, kept, today, undefined, compileKeptRule);
    if (!kept?.rules.has(delivery.ruleId)) return decide(todaysRule, delivery.ruleId, () => ({ action: 'send', rule: todaysRule! }));
    return decide(todaysRule, delivery.ruleId, () => this.version(delivery, kept, today, todaysRule, compileKeptRule));
  }

  private version(delivery: { ruleId: string; ruleSetHash: string }, kept: KeptSetEntry, today: RuleSet, todaysRule: CompiledRule | undefined, compileKeptRule: KeptRuleCompiler): RuleVersionLookup {
    // Today's hash is part of the key: literal secrets come from today's rule.
    const key = `${delivery.ruleSetHash}\0${delivery.ruleId}\0${today.hash}`;
    const cached = this.compiled.get(key);
    if (cached) return cached;
    const version = kept.rules.get(delivery.ruleId);
    const result: RuleVersionLookup = version === undefined
      ? { action: 'dead', code: 'rule_removed', reason: `rule "${delivery.ruleId}" is not in rule set ${delivery.ruleSetHash}` }
      : toLookup(compileKeptRule(version, this.env, todaysRule));
    remember(this.compiled, key, result);
    return result;
  }

  private async keptSet(hash: string): Promise<KeptSetEntry | null> {
    if (this.keptSets.has(hash)) return this.keptSets.get(hash)!;
    const stored = await this.store.getRuleSet(hash);
    const entry = stored && { kind: stored.kind, rules: new Map(asKeptRules(stored.rules).map((rule) => [rule.id, rule])) };
    remember(this.keptSets, hash, entry);
    return entry;
  }
}

function decide(todaysRule: CompiledRule | undefined, ruleId: string, send: () => RuleVersionLookup): RuleVersionLookup {
  if (!todaysRule) return { action: 'dead', code: 'rule_removed', reason: `rule "${ruleId}" is no longer in the rule set` };
  if (pauseReason(todaysRule) !== null) return { action: 'hold' };
  return send();
}

function toLookup(compiled: KeptRuleCompilation): RuleVersionLookup {
  return compiled.ok ? { action: 'send', rule: compiled.rule } : { action: 'dead', code: 'rule_version_unavailable', reason: compiled.message };
}

function remember<V>(map: Map<string, V>, key: string, value: V): void {
  if (map.size >= MAX_CACHED) map.delete(map.keys().next().value!);
  map.set(key, value);
}
