import { afterAll, describe, expect, it } from 'vitest';
import { loadRuleSet } from '../../../src/rules/loader.js';
import { formatRuleFileError } from '../../../src/rules/rule-file-error.js';
import { shippedExampleRulesDir } from '../../helpers/rules.js';
import { removeTempDirs } from '../../helpers/temp-dir.js';
import { purchase, purchaseInput } from '../../unit/rules/rule-dir-fixture.js';

// Copies of the shipped files, by name: rules a user adds to rules/ are theirs, not the suite's.
const examplesDir = shippedExampleRulesDir();
afterAll(() => removeTempDirs());

describe('the example rules shipped in rules/', () => {
  it('load without any environment variables, both disabled, the Slack rule only warning', async () => {
    const result = await loadRuleSet(examplesDir, {});
    if (!result.ok) throw new Error(result.errors.map(formatRuleFileError).join('\n'));
    expect(result.ruleSet.rules.map((rule) => [rule.id, rule.enabled])).toEqual([
      ['local-sink', false],
      ['slack-card-purchases', false],
    ]);
    expect(result.warnings).toHaveLength(1);
    expect(result.warnings[0]).toMatch(/slack-card-purchases\.yaml:\d+ to\.url: environment variable SLACK_WEBHOOK_URL is not set/);
  });

  it('forward a purchase untouched to the local sink once enabled', async () => {
    const result = await loadRuleSet(examplesDir, {});
    const localSink = result.ok ? result.ruleSet.rules.find((rule) => rule.id === 'local-sink') : undefined;
    expect(localSink?.destination.url).toBe('http://127.0.0.1:9999/hook');
    const input = purchaseInput();
    expect([localSink?.enabled, localSink?.matches(input)]).toEqual([false, false]);
    expect((await localSink?.render(input))?.body).toBe(input.raw);
  });

  it('turn a big card purchase into a Slack message once SLACK_WEBHOOK_URL is set', async () => {
    const result = await loadRuleSet(examplesDir, { SLACK_WEBHOOK_URL: 'https://hooks.slack.com/services/T0/B0/x' });
    const slack = result.ok ? result.ruleSet.rules.find((rule) => rule.id === 'slack-card-purchases') : undefined;
    expect([slack?.enabled, slack?.matches(purchaseInput())]).toEqual([false, false]);
    const rendered = await slack?.render(purchaseInput({ body: { ...purchase, result: { ...purchase.result, totalPriceUsd: 1234.5 } } }));
    expect(JSON.parse(rendered?.body.toString() ?? '')).toEqual({
      text: `Card purchase of $1,234.50 (2 token(s)) on checkout ${purchase.result.checkoutId}`,
    });
  });
});
