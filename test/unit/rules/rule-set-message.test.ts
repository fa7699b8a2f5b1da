import { afterEach, describe, expect, it } from 'vitest';
import { loadRuleSet } from '../../../src/rules/loader.js';
import { formatRuleFileError } from '../../../src/rules/rule-file-error.js';
import { ruleSetFromMessage, ruleSetMessageOf } from '../../../src/rules/rule-set-message.js';
import type { RuleEventInput, RuleSet } from '../../../src/rules/types.js';
import { sampleTransferSucceeded } from '../../../src/samples/transfer-succeeded.js';
import { removeTempDirs } from '../../helpers/temp-dir.js';
import { makeRuleDir, ruleYaml } from './rule-dir-fixture.js';

afterEach(removeTempDirs);

// Every part a delivery uses: a filter, a transform, an order key, headers from the environment and written
// literally, a literal signing secret (never kept in the store, so it must travel), retries and a timeout.
const FULFIL = `id: big-card-purchases
on: [transfer:succeeded]
where:
  result.totalPriceUsd: { $gte: 100 }
transform: |
  { "email": result.email, "total": result.totalPriceUsd }
to:
  url: https://hooks.example.com/\${FULFIL_PATH}
  headers: { Authorization: "Bearer \${FULFIL_TOKEN}", X-Api-Key: literal-key-123 }
sign: { scheme: hmac-sha256-hex, secret: literal-signing-secret }
order: { key: result.email }
timeout: 3s
retry: { schedule: [0s, 5s, 1m], retryOn: [409] }
`;
const ENV = { FULFIL_PATH: 'fulfil', FULFIL_TOKEN: 'tok-9f8e7d6c5b4a' };

async function loaded(env: Record<string, string | undefined>): Promise<RuleSet> {
  const dir = await makeRuleDir({ 'fulfil.yaml': FULFIL, 'other.yaml': ruleYaml('disabled', 'enabled: false\n') });
  const result = await loadRuleSet(dir.dir, env);
  if (!result.ok) throw new Error(result.errors.map(formatRuleFileError).join('\n'));
  return result.ruleSet;
}

/** Two tokens at `unitPriceUsd` each, plus fees. */
const input = (unitPriceUsd: number): RuleEventInput => {
  const body = sampleTransferSucceeded({ email: 'buyer@example.com', quantity: 2, unitPriceUsd });
  return { source: 'checkout', event: 'transfer:succeeded', body, raw: Buffer.from(JSON.stringify(body)) };
};

describe('a rule set handed to another thread', () => {
  it('is built there into the same rules: destination, secrets, filter, transform, order and retries', async () => {
    const ruleSet = await loaded(ENV);
    // What postMessage does to it on the way.
    const rebuilt = ruleSetFromMessage(structuredClone(ruleSetMessageOf(ruleSet)), ENV);

    expect(rebuilt.hash).toBe(ruleSet.hash);
    expect(rebuilt.files).toEqual(ruleSet.files);
    expect(rebuilt.loadedAt).toEqual(ruleSet.loadedAt);
    expect(rebuilt.rules.map((rule) => rule.id)).toEqual(['big-card-purchases', 'disabled']);
    for (const [index, rule] of rebuilt.rules.entries()) {
      const original = ruleSet.rules[index]!;
      expect(rule.destination).toEqual(original.destination);
      expect(rule.signing).toEqual(original.signing);
      expect(rule.describe()).toEqual(original.describe());
      expect(rule.kept).toEqual(original.kept);
      expect({ ...rule, matches: null, render: null, describe: null }).toEqual({ ...original, matches: null, render: null, describe: null });
    }
    const [fulfil] = rebuilt.rules;
    expect(fulfil!.destination).toMatchObject({ url: 'https://hooks.example.com/fulfil', headers: { Authorization: 'Bearer tok-9f8e7d6c5b4a', 'X-Api-Key': 'literal-key-123' } });
    expect(fulfil!.signing).toMatchObject({ secret: 'literal-signing-secret' });
    expect(fulfil!.order).toMatchObject({ key: 'result.email' });
    expect(fulfil!.retryScheduleMs).toEqual([0, 5_000, 60_000]);
    expect([fulfil!.matches(input(75)), fulfil!.matches(input(25))]).toEqual([true, false]);
    const event = input(75);
    const rendered = (await fulfil!.render(event)).body.toString();
    expect(rendered).toBe((await ruleSet.rules[0]!.render(event)).body.toString());
    expect(JSON.parse(rendered)).toEqual({ email: 'buyer@example.com', total: (event.body as { result: { totalPriceUsd: number } }).result.totalPriceUsd });
    // Like the receiver's rules, they show no secret when logged.
    expect(JSON.stringify(fulfil)).not.toContain('literal-signing-secret');
  });

  it('is refused, naming the rule, where a rule does not build with the thread’s environment', async () => {
    const message = ruleSetMessageOf(await loaded(ENV));
    expect(() => ruleSetFromMessage(message, { FULFIL_TOKEN: 'tok' })).toThrow(/rule "big-card-purchases" \(.*fulfil\.yaml:1\) does not build: .*FULFIL_PATH/);
  });
});
