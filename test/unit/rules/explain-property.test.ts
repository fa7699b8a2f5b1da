import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileRule } from '../../../src/rules/compile-rule.js';
import { explainRule, type ClauseExplanation } from '../../../src/rules/explain.js';

// Random rules and bodies over a few shared paths, so queries often meet the fields (and arrays) they read.
const PATHS = ['a', 'b', 'a.b', 'list', 'list.x', 'n'];
const EVENTS = ['transfer:succeeded', 'transfer:failed'];

const scalar = fc.oneof(fc.integer({ min: -3, max: 3 }), fc.constantFrom('x', 'y', ''), fc.boolean(), fc.constant(null));
const value: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: 'small', withCrossShrink: true }, scalar, fc.array(tie('value'), { maxLength: 3 }), fc.dictionary(fc.constantFrom('b', 'x', 'n'), tie('value'), { maxKeys: 2 })),
})).value;
const body = fc.dictionary(fc.constantFrom('a', 'b', 'list', 'n'), value, { maxKeys: 4 });

const leafCondition = fc.oneof(
  scalar.map((v) => ({ $eq: v })),
  scalar.map((v) => ({ $ne: v })),
  fc.constantFrom('$gt', '$gte', '$lt', '$lte').chain((op) => fc.oneof(fc.integer({ min: -3, max: 3 }), fc.constantFrom('x', 'y')).map((v) => ({ [op]: v }))),
  fc.array(scalar, { maxLength: 3 }).map((v) => ({ $in: v })),
  fc.array(scalar, { maxLength: 3 }).map((v) => ({ $nin: v })),
  fc.array(scalar, { minLength: 1, maxLength: 2 }).map((v) => ({ $all: v })),
  fc.boolean().map((v) => ({ $exists: v })),
  fc.constantFrom('^x', 'y$', 'X').chain((pattern) => fc.option(fc.constant('i'), { nil: undefined }).map((flags) => (flags ? { $regex: pattern, $options: flags } : { $regex: pattern }))),
  fc.integer({ min: 0, max: 2 }).map((v) => ({ $size: v })),
  fc.constant({ $mod: [2, 0] }),
  fc.constantFrom('number', 'string', 'bool', 'array', 'null').map((v) => ({ $type: v })),
);

const query: fc.Arbitrary<Record<string, unknown>> = fc.letrec((tie) => ({
  condition: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    leafCondition,
    fc.tuple(leafCondition, leafCondition).map(([a, b]) => ({ ...a, ...b })),
    leafCondition.map((c) => ({ $not: c })),
    tie('query').map((q) => ({ $elemMatch: q })),
    leafCondition.map((c) => ({ $elemMatch: c })),
  ),
  clause: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.tuple(fc.constantFrom(...PATHS), scalar).map(([path, v]) => ({ [path]: v })),
    fc.tuple(fc.constantFrom(...PATHS), tie('condition')).map(([path, c]) => ({ [path]: c })),
    fc.tuple(fc.constantFrom('$and', '$or', '$nor'), fc.array(tie('query'), { minLength: 1, maxLength: 3 })).map(([op, items]) => ({ [op]: items })),
  ),
  query: fc.array(tie('clause'), { maxLength: 3 }).map((clauses) => Object.assign({}, ...clauses) as Record<string, unknown>),
})).query as fc.Arbitrary<Record<string, unknown>>;

/** Every node of a clause tree, depth first. */
function* nodes(clauses: ClauseExplanation[]): Generator<ClauseExplanation> {
  for (const clause of clauses) {
    yield clause;
    yield* nodes(clause.children ?? []);
  }
}

describe('explanations agree with the matcher', () => {
  it('the verdict, and "all clauses pass", are the matcher\'s for any rule and body', async () => {
    const verdicts = { matched: 0, notMatched: 0, clausesPassDisabled: 0 };
    await fc.assert(
      fc.asyncProperty(query, body, fc.boolean(), fc.subarray(EVENTS, { minLength: 1 }), fc.constantFrom(...EVENTS), async (where, doc, enabled, on, event) => {
        const compiled = compileRule({ id: 'p', on, where, enabled, to: { url: 'https://hooks.example.com/p' } }, { file: 'p.yaml', line: 1 }, {});
        fc.pre(compiled.rule !== undefined); // a query the loader refuses never reaches the matcher
        const rule = compiled.rule!;
        const raw = Buffer.from(JSON.stringify(doc));
        const input = { source: 'checkout', event, body: JSON.parse(raw.toString()) as unknown, raw }; // parsed as ingest parses it

        const explanation = await explainRule(rule, input);
        expect(explanation.matched).toBe(rule.matches(input));
        verdicts[explanation.matched ? 'matched' : 'notMatched'] += 1;
        if (!enabled && explanation.clausesPass) verdicts.clausesPassDisabled += 1;
        // The failing list is exactly the failing top-level clauses: passing all of them is matching.
        const topLevel = [explanation.on, explanation.source, ...explanation.where];
        expect(topLevel.every((clause) => clause.pass)).toBe(explanation.clausesPass);
        expect(explanation.failing.length === 0).toBe(explanation.clausesPass);
        for (const node of nodes(explanation.where)) expect(typeof node.pass).toBe('boolean');
      }),
      { numRuns: 1000 },
    );
    // The generator reaches both verdicts often, so the agreement above is not vacuous.
    expect(verdicts.matched).toBeGreaterThan(50);
    expect(verdicts.notMatched).toBeGreaterThan(50);
    expect(verdicts.clausesPassDisabled).toBeGreaterThan(10);
  });
});
