import type { CompiledRule, RuleEventInput, RuleSet } from './types.js';

/**
 * Narrows a rule set to the rules that can possibly match one event, so ingest cost does not grow with
 * every rule loaded. A rule whose `where` has a top-level equality on a plain value (`path: value`,
 * `{ $eq: value }` or `{ $in: [values] }`) is filed under that path and value; an event then only meets
 * the rules filed under the values it actually has, plus the rules with no such clause. Pruning is
 * conservative: whenever the event's value at a path is not a plain value reached through plain objects
 * (arrays, where Mongo-style equality means "contains"), every rule filed under that path stays a
 * candidate. The full filter still decides; the index only skips rules that cannot match.
 */

type Plain = string | number | boolean;

interface EqualityClause {
  path: string;
  values: Plain[];
}

const isPlain = (value: unknown): value is Plain => typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean';
const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const valueKey = (value: Plain): string => `${typeof value}:${String(value)}`;

function equalityClause(where: Record<string, unknown>): EqualityClause | null {
  for (const [path, condition] of Object.entries(where)) {
    if (path.startsWith('$')) continue;
    if (isPlain(condition)) return { path, values: [condition] };
    if (!isRecord(condition)) continue;
    const operators = Object.keys(condition);
    if (operators.length !== 1) continue;
    if (operators[0] === '$eq' && isPlain(condition.$eq)) return { path, values: [condition.$eq] };
    if (operators[0] === '$in' && Array.isArray(condition.$in) && condition.$in.every(isPlain)) return { path, values: condition.$in };
  }
  return null;
}

const UNKNOWN = Symbol('unknown');

/** The value at a dotted path through plain objects only; UNKNOWN where an array or other structure intervenes. */
function plainValueAt(body: unknown, path: string): Plain | undefined | typeof UNKNOWN {
  let current: unknown = body;
  for (const segment of path.split('.')) {
    if (current === undefined || current === null) return undefined;
    if (!isRecord(current)) return UNKNOWN;
    current = current[segment];
  }
  if (current === undefined || current === null) return undefined;
  return isPlain(current) ? current : UNKNOWN;
}

export class RuleIndex {
  private readonly position = new Map<CompiledRule, number>();
  private readonly unfiled: CompiledRule[] = [];
  private readonly byPath = new Map<string, { all: CompiledRule[]; byValue: Map<string, CompiledRule[]> }>();

  constructor(rules: readonly CompiledRule[]) {
    rules.forEach((rule, i) => {
      this.position.set(rule, i);
      const clause = rule.enabled ? equalityClause(rule.describe().where) : null;
      if (!clause) {
        this.unfiled.push(rule);
        return;
      }
      let group = this.byPath.get(clause.path);
      if (!group) this.byPath.set(clause.path, (group = { all: [], byValue: new Map() }));
      group.all.push(rule);
      for (const key of new Set(clause.values.map(valueKey))) {
        const list = group.byValue.get(key) ?? [];
        list.push(rule);
        group.byValue.set(key, list);
      }
    });
  }

  /** The rules that may match, in rule-set order; each must still pass its own filter. */
  candidates(input: RuleEventInput): CompiledRule[] {
    if (this.byPath.size === 0) return this.unfiled;
    const found = [...this.unfiled];
    for (const [path, group] of this.byPath) {
      const value = plainValueAt(input.body, path);
      if (value === UNKNOWN) found.push(...group.all);
      else if (value !== undefined) found.push(...(group.byValue.get(valueKey(value)) ?? []));
    }
    return found.sort((a, b) => this.position.get(a)! - this.position.get(b)!);
  }
}

const indexes = new WeakMap<RuleSet, RuleIndex>();

/** The rules of `ruleSet` that match `input`, in rule-set order; the index is built once per rule set. */
export function matchingRules(ruleSet: RuleSet, input: RuleEventInput): CompiledRule[] {
  let index = indexes.get(ruleSet);
  if (!index) indexes.set(ruleSet, (index = new RuleIndex(ruleSet.rules)));
  return index.candidates(input).filter((rule) => rule.matches(input));
}
