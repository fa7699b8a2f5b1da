import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileMatcher } from '../../../src/rules/matcher.js';
import { matchingRules, RuleIndex } from '../../../src/rules/rule-index.js';
import type { CompiledRule, RuleEventInput, RuleSet } from '../../../src/rules/types.js';

/** Just enough of a compiled rule for matching: the real matcher, the real `where`. */
function rule(id: string, where: Record<string, unknown>, on: string[] = ['transfer:succeeded'], enabled = true): CompiledRule {
  const compiled = compileMatcher({ on, where, enabled });
  if (!compiled.ok) throw new Error(JSON.stringify(compiled.issues));
  return { id, enabled, matches: compiled.matcher.matches, describe: () => ({ where }) } as unknown as CompiledRule;
}

const input = (body: unknown, event = 'transfer:succeeded'): RuleEventInput => ({ source: 'checkout', event, body, raw: Buffer.from(JSON.stringify(body)) });
const ruleSet = (rules: CompiledRule[]): RuleSet => ({ rules, hash: 'h', loadedAt: new Date(), files: [] }) as RuleSet;
const ids = (rules: CompiledRule[]) => rules.map((r) => r.id);

describe('RuleIndex', () => {
  it('offers only the rules filed under the value the event has, plus unfiled rules, in rule-set order', () => {
    const rules = [
      rule('a', { 'result.checkoutId': 'c1' }),
      rule('any', { 'result.quantity': { $gte: 1 } }),
      rule('b', { 'result.checkoutId': { $eq: 'c2' } }),
      rule('ab', { 'result.checkoutId': { $in: ['c1', 'c2'] } }),
    ];
    const index = new RuleIndex(rules);
    expect(ids(index.candidates(input({ result: { checkoutId: 'c1', quantity: 2 } })))).toEqual(['a', 'any', 'ab']);
    expect(ids(index.candidates(input({ result: { checkoutId: 'c3' } })))).toEqual(['any']);
    expect(ids(index.candidates(input({ result: {} })))).toEqual(['any']);
  });

  it('keeps every filed rule a candidate when an array intervenes (Mongo equality means "contains")', () => {
    const rules = [rule('tag', { 'result.tags': 'vip' }), rule('nested', { 'result.items.sku': 'X' })];
    const index = new RuleIndex(rules);
    expect(ids(index.candidates(input({ result: { tags: ['a', 'vip'], items: [{ sku: 'X' }] } })))).toEqual(['tag', 'nested']);
    expect(ids(matchingRules(ruleSet(rules), input({ result: { tags: ['a', 'vip'], items: [{ sku: 'X' }] } })))).toEqual(['tag', 'nested']);
  });

  it('never changes the outcome: matches exactly the rules that evaluating every rule would', () => {
    const value = fc.oneof(fc.constantFrom('a', 'b', 'c', '1', ''), fc.integer({ min: 0, max: 3 }), fc.boolean());
    const path = fc.constantFrom('result.k', 'result.n', 'result.deep.k', 'result.list', 'top');
    const condition = fc.oneof(
      value,
      value.map((v) => ({ $eq: v })),
      fc.array(value, { maxLength: 3 }).map((vs) => ({ $in: vs })),
      fc.integer({ min: 0, max: 3 }).map((n) => ({ $gte: n })),
      fc.constant({ $exists: true }),
    );
    const where = fc.dictionary(path, condition, { maxKeys: 2, noNullPrototype: true });
    const body = fc.record({
      top: fc.option(value, { nil: undefined }),
      result: fc.record({
        k: fc.option(value, { nil: undefined }),
        n: fc.option(value, { nil: undefined }),
        deep: fc.option(fc.oneof(fc.record({ k: value }), fc.array(fc.record({ k: value }), { maxLength: 2 })), { nil: undefined }),
        list: fc.option(fc.array(value, { maxLength: 3 }), { nil: undefined }),
      }),
    });
    fc.assert(
      fc.property(fc.array(fc.tuple(where, fc.boolean()), { minLength: 1, maxLength: 12 }), fc.array(body, { minLength: 1, maxLength: 5 }), (defs, bodies) => {
        const rules = defs.map(([w, enabled], i) => rule(`r${i}`, w, ['transfer:succeeded'], enabled));
        const set = ruleSet(rules);
        for (const b of bodies) {
          const event = input(JSON.parse(JSON.stringify(b)));
          expect(ids(matchingRules(set, event))).toEqual(ids(rules.filter((r) => r.matches(event))));
        }
      }),
      { numRuns: 500 },
    );
  });
});
