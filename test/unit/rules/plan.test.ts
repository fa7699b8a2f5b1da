import { afterEach, describe, expect, it } from 'vitest';
import { loadRuleSet } from '../../../src/rules/loader.js';
import { dryRunRules } from '../../../src/rules/dry-run.js';
import { planDeliveries } from '../../../src/rules/plan.js';
import type { RuleSet } from '../../../src/rules/types.js';
import { removeTempDirs } from '../../helpers/temp-dir.js';
import { makeRuleDir, purchaseInput, ruleYaml, type RuleDir } from './rule-dir-fixture.js';

let ruleDir: RuleDir;
afterEach(removeTempDirs);

async function ruleSetOf(files: Record<string, string>): Promise<RuleSet> {
  ruleDir = await makeRuleDir(files);
  const result = await loadRuleSet(ruleDir.dir, {});
  if (!result.ok) throw new Error(JSON.stringify(result.errors));
  return result.ruleSet;
}

describe('planDeliveries', () => {
  it('plans one delivery per enabled matching rule, in rule order', async () => {
    const ruleSet = await ruleSetOf({
      'a.yaml': ruleYaml('untouched'),
      'b.yaml': ruleYaml('reshaped', 'transform: \'{ "email": result.email }\'\n'),
      'c.yaml': ruleYaml('too-expensive', 'where: { result.totalPriceUsd: { $gte: 1000 } }\n'),
      'd.yaml': ruleYaml('switched-off', 'enabled: false\n'),
      'e.yaml': ruleYaml('other-source', 'source: staging\n'),
    });
    const planned = await planDeliveries(ruleSet, purchaseInput());
    expect(planned).toEqual([
      { ruleId: 'untouched', ruleSetHash: ruleSet.hash, delayMs: 0, body: null, contentType: 'application/json' },
      // Rendered by the delivery loop, never while planning.
      { ruleId: 'reshaped', ruleSetHash: ruleSet.hash, delayMs: 0, body: null, contentType: 'application/json' },
    ]);
  });

  it('gives an ordered rule\'s delivery the value at its key path; without a scalar there, the delivery is unordered', async () => {
    const ruleSet = await ruleSetOf({ 'a.yaml': ruleYaml('ordered', 'order:\n  key: result.checkoutId\n  maxBlockedFor: 10m\n') });
    const withKey = purchaseInput({ body: { event: 'transfer:succeeded', result: { id: 't', checkoutId: 'chk-1' } } });
    expect(await planDeliveries(ruleSet, withKey)).toEqual([expect.objectContaining({ ruleId: 'ordered', orderKey: 'chk-1' })]);
    expect(await planDeliveries(ruleSet, purchaseInput({ body: { event: 'transfer:succeeded', result: { id: 't', checkoutId: 42 } } }))).toEqual([
      expect.objectContaining({ orderKey: '42' }),
    ]);
    for (const checkoutId of [undefined, null, '', { nested: 1 }, ['a']]) {
      const [planned] = await planDeliveries(ruleSet, purchaseInput({ body: { event: 'transfer:succeeded', result: { id: 't', checkoutId } } }));
      expect(planned).not.toHaveProperty('orderKey');
    }
    expect(ruleSet.rules[0]!.describe().order).toEqual({ key: 'result.checkoutId', maxBlockedForMs: 600_000, onBlockedTimeout: 'dead-letter' });
  });

  it('keeps order keys with NUL or lone surrogates distinct, in text both stores hold (a cut that splits a pair included)', async () => {
    const ruleSet = await ruleSetOf({ 'a.yaml': ruleYaml('ordered', 'order:\n  key: result.checkoutId\n  maxBlockedFor: 10m\n') });
    const keyOf = async (checkoutId: string): Promise<string> => (await planDeliveries(ruleSet, purchaseInput({ body: { event: 'transfer:succeeded', result: { id: 't', checkoutId } } })))[0]!.orderKey!;
    const values = ['a\u0000b', 'a\u0000c', 'k\ud800', 'k\ufffd', 'k\udc00', '\u0001"k\\ud800"'];
    const keys = await Promise.all(values.map(keyOf));
    expect(new Set(keys).size).toBe(values.length);
    // A cut after 512 characters may leave half a pair: still storable (over-long keys that share a start group together).
    keys.push(await keyOf(`${'x'.repeat(511)}\ud83d\ude00`));
    for (const key of keys) expect(/[\ud800-\udfff\u0000]/u.test(key)).toBe(false);
    expect(await keyOf('chk-1')).toBe('chk-1');
  });

  it('runs no transform while planning: a transform that never ends is planned at once, to be rendered at delivery', async () => {
    const ruleSet = await ruleSetOf({
      'a.yaml': ruleYaml('endless', 'transform: "( $loop := function() { $loop() }; $loop() )"\n'),
      'b.yaml': ruleYaml('broken', 'transform: result.email + 1\n'),
    });
    const planned = await planDeliveries(ruleSet, purchaseInput());
    expect(planned).toEqual([
      { ruleId: 'endless', ruleSetHash: ruleSet.hash, delayMs: 0, body: null, contentType: 'application/json' },
      { ruleId: 'broken', ruleSetHash: ruleSet.hash, delayMs: 0, body: null, contentType: 'application/json' },
    ]);
  });

  it('plans nothing for an event no rule takes', async () => {
    const ruleSet = await ruleSetOf({ 'a.yaml': ruleYaml('a') });
    expect(await planDeliveries(ruleSet, purchaseInput({ event: 'checkout:created' }))).toEqual([]);
  });
});

describe('dryRunRules', () => {
  it('says for every rule whether it matched, why not, and what it would send', async () => {
    const ruleSet = await ruleSetOf({
      'a.yaml': ruleYaml('untouched'),
      'b.yaml': ruleYaml('reshaped', 'transform: \'{ "n": result.quantity }\'\n'),
      'c.yaml': ruleYaml('too-expensive', 'where: { result.totalPriceUsd: { $gte: 1000 } }\n'),
      'd.yaml': ruleYaml('switched-off', 'enabled: false\n'),
    });
    const input = purchaseInput();
    const outcomes = await dryRunRules(ruleSet, input);
    expect(outcomes.map(({ ruleId, matched, reason }) => ({ ruleId, matched, reason }))).toEqual([
      { ruleId: 'untouched', matched: true, reason: null },
      { ruleId: 'reshaped', matched: true, reason: null },
      { ruleId: 'too-expensive', matched: false, reason: 'where result.totalPriceUsd $gte 1000: found 150.5' },
      { ruleId: 'switched-off', matched: false, reason: 'the rule is disabled; it would match if it were enabled' },
    ]);
    expect(outcomes[0]?.body).toBe(input.raw);
    expect(outcomes[1]?.body?.toString()).toBe('{"n":2}');
    expect(outcomes[0]).toMatchObject({ file: ruleDir.file('a.yaml'), line: 1 });
  });

  it('renders in the sandbox as delivery does: a failing transform gives the reason its delivery would be dead-lettered with', async () => {
    const ruleSet = await ruleSetOf({
      'a.yaml': ruleYaml('broken', 'transform: result.email + 1\n'),
      'b.yaml': ruleYaml('empty', 'transform: result.nothingHere\n'),
      'c.yaml': ruleYaml('endless', 'transform: "( $loop := function() { $loop() }; $loop() )"\n'),
    });
    const input = purchaseInput();
    const outcomes = await dryRunRules(ruleSet, input);
    expect(outcomes.map(({ ruleId, matched, body }) => ({ ruleId, matched, body }))).toEqual([
      { ruleId: 'broken', matched: true, body: input.raw },
      { ruleId: 'empty', matched: true, body: input.raw },
      { ruleId: 'endless', matched: true, body: input.raw },
    ]);
    expect(outcomes[0]?.deadReason).toMatch(/^transform failed at position \d+: T2001 /);
    expect(outcomes[1]?.deadReason).toBe('transform produced no value (a path in it matched nothing)');
    expect(outcomes[2]?.deadReason).toBe('transform exceeded its time limit of 1000 ms');
  });
});
