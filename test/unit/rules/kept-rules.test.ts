import { afterAll, describe, expect, it } from 'vitest';
import { compileKeptRule } from '../../../src/rules/kept-rule-set.js';
import { keptRuleSetOf, LITERAL_SECRET } from '../../../src/rules/kept-rules.js';
import { loadRuleSet } from '../../../src/rules/loader.js';
import type { RuleSet } from '../../../src/rules/types.js';
import { rulesDirWith } from '../../helpers/rules.js';
import { removeTempDirs } from '../../helpers/temp-dir.js';

afterAll(() => removeTempDirs());

async function load(yaml: string, env: Record<string, string> = {}): Promise<RuleSet> {
  const result = await loadRuleSet(rulesDirWith({ 'r.yaml': yaml }), env);
  if (!result.ok) throw new Error(JSON.stringify(result.errors));
  return result.ruleSet;
}

const withSecrets = (secret: string, token: string) =>
  `id: r\non: [transfer:succeeded]\nto:\n  url: https://example.com/\${PATH_PART}\n  headers:\n    Authorization: "${token}"\n    X-Plain: plain\nsign:\n  scheme: hmac-sha256-hex\n  secret: "${secret}"\n`;

describe('kept rules', () => {
  it('keep ${ENV} references unresolved and never a literal secret', async () => {
    const ruleSet = await load(withSecrets('literal-signing-secret', 'Bearer ${TOKEN}'), { PATH_PART: 'p', TOKEN: 'resolved-token' });
    const kept = keptRuleSetOf(ruleSet);
    const text = JSON.stringify(kept);
    expect(text).not.toContain('literal-signing-secret');
    expect(text).not.toContain('resolved-token');
    expect(kept.rules).toEqual([expect.objectContaining({
      id: 'r', file: expect.stringMatching(/r\.yaml$/), line: 1,
      definition: expect.objectContaining({
        to: { url: 'https://example.com/${PATH_PART}', method: 'POST', headers: { Authorization: 'Bearer ${TOKEN}', 'X-Plain': 'plain' }, forwardHeaders: [] },
        sign: { scheme: 'hmac-sha256-hex', secret: LITERAL_SECRET, header: 'X-Service-Signature' },
      }),
    })]);
  });

  it('compile on the sending node with its environment, taking a literal secret from today\'s rule', async () => {
    const old = await load(withSecrets('literal-signing-secret', 'Bearer ${TOKEN}'), { PATH_PART: 'old', TOKEN: 't' });
    const today = await load(withSecrets('todays-literal', 'Bearer ${TOKEN}').replace('${PATH_PART}', 'new'), { TOKEN: 't' });
    const [kept] = keptRuleSetOf(old).rules as Parameters<typeof compileKeptRule>[0][];
    const compiled = compileKeptRule(kept!, { PATH_PART: 'sender', TOKEN: 'senders-token' }, today.rules[0]);
    if (!compiled.ok) throw new Error(compiled.message);
    expect(compiled.rule.destination).toEqual({
      url: 'https://example.com/sender', method: 'POST', headers: { Authorization: 'Bearer senders-token', 'X-Plain': 'plain' }, forwardHeaders: [],
    });
    expect(compiled.rule.signing).toEqual({ scheme: 'hmac-sha256-hex', secret: 'todays-literal', header: 'X-Service-Signature' });

    const missingEnv = compileKeptRule(kept!, { TOKEN: 't' }, today.rules[0]);
    expect(missingEnv).toEqual({ ok: false, message: expect.stringMatching(/rule "r" .*cannot be compiled on this node: to\.url: environment variable PATH_PART is not set/) });
    const noLiteralToday = compileKeptRule(kept!, { PATH_PART: 'p', TOKEN: 't' }, undefined);
    expect(noLiteralToday).toEqual({ ok: false, message: expect.stringMatching(/signing secret of rule "r" was written literally/) });
  });
});
