import { describe, expect, it } from 'vitest';
import { destinationCheck } from '../../../src/delivery/destination-check.js';
import { createSsrfGuard } from '../../../src/delivery/ssrf-guard.js';
import { compileRule } from '../../../src/rules/compile-rule.js';
import { maskUrlCredentials } from '../../../src/rules/describe-rule.js';
import { explainRule, explainRules, mismatchReason, PREVIEW_DELIVERY_ID, type ClauseExplanation } from '../../../src/rules/explain.js';
import type { CompiledRule, RuleSet } from '../../../src/rules/types.js';
import { signHmacSha256Hex } from '../../../src/signing/hmac-sha256-hex.js';
import { purchase, purchaseInput } from './rule-dir-fixture.js';

function rule(fields: Record<string, unknown>, env: Record<string, string> = {}): CompiledRule {
  const compiled = compileRule({ id: 'r', on: ['transfer:succeeded'], to: { url: 'https://hooks.example.com/r' }, ...fields }, { file: 'rules/r.yaml', line: 1 }, env);
  if (!compiled.rule) throw new Error(JSON.stringify(compiled.errors));
  return compiled.rule;
}

const leaf = (clause: ClauseExplanation) => ({ path: clause.path, operator: clause.operator, expected: clause.expected, found: clause.found, absent: clause.absent, pass: clause.pass });

describe('explainRule', () => {
  it('lists every failing where clause with the value found or "absent", not only the first', async () => {
    const where = {
      'result.paymentMethod': 'BUY_WITH_CRYPTO',
      'result.quantity': { $gte: 5 },
      'result.email': { $regex: '@example\\.org$' },
      'result.couponCode': { $exists: true },
      'result.totalPriceUsd': { $gt: 100 },
    };
    const explanation = await explainRule(rule({ where }), purchaseInput());
    expect(explanation.matched).toBe(false);
    expect(explanation.where.map(leaf)).toEqual([
      { path: 'result.paymentMethod', operator: '$eq', expected: 'BUY_WITH_CRYPTO', found: 'BUY_WITH_CARD', absent: undefined, pass: false },
      { path: 'result.quantity', operator: '$gte', expected: 5, found: 2, absent: undefined, pass: false },
      { path: 'result.email', operator: '$regex', expected: '@example\\.org$', found: 'buyer@example.com', absent: undefined, pass: false },
      { path: 'result.couponCode', operator: '$exists', expected: true, found: undefined, absent: true, pass: false },
      { path: 'result.totalPriceUsd', operator: '$gt', expected: 100, found: 150.5, absent: undefined, pass: true },
    ]);
    expect(explanation.failing).toEqual([
      'where result.paymentMethod $eq "BUY_WITH_CRYPTO": found "BUY_WITH_CARD"',
      'where result.quantity $gte 5: found 2',
      'where result.email $regex "@example\\\\.org$": found "buyer@example.com"',
      'where result.couponCode $exists true: absent',
    ]);
    expect(explanation.outgoing).toBeUndefined();
  });

  it('judges on and source as clauses of their own, alongside the where clauses', async () => {
    const explanation = await explainRule(rule({ on: ['transfer:failed'], source: 'staging', where: { 'result.quantity': 9 } }), purchaseInput());
    expect(leaf(explanation.on)).toMatchObject({ path: 'event', operator: '$in', expected: ['transfer:failed'], found: 'transfer:succeeded', pass: false });
    expect(leaf(explanation.source)).toMatchObject({ path: 'source', operator: '$eq', expected: 'staging', found: 'checkout', pass: false });
    expect(explanation.failing).toHaveLength(3);
    const anySource = await explainRule(rule({}), purchaseInput());
    expect(anySource.source).toMatchObject({ operator: 'any', pass: true });
  });

  it('shows nested operators as a tree with every branch judged', async () => {
    const where = {
      $or: [{ 'result.quantity': { $gt: 10 } }, { 'result.paymentMethod': { $in: ['BUY_WITH_CARD'] }, 'result.email': { $not: { $regex: 'example' } } }],
      'result.totalPriceUsd': { $gte: 100, $lt: 150 },
      'result.items': { $elemMatch: { sku: 'B', qty: { $gte: 2 } } },
      $nor: [{ 'result.quantity': 2 }],
    };
    const body = { ...purchase, result: { ...purchase.result, items: [{ sku: 'A', qty: 5 }, { sku: 'B', qty: 1 }] } };
    const explanation = await explainRule(rule({ where }), purchaseInput({ body }));
    const [or, price, items, nor] = explanation.where;

    expect(or).toMatchObject({ operator: '$or', pass: false });
    expect(or!.path).toBeUndefined();
    expect(or!.children![0]).toMatchObject({ path: 'result.quantity', operator: '$gt', expected: 10, found: 2, pass: false });
    const [inClause, notClause] = or!.children![1]!.children!;
    expect(or!.children![1]).toMatchObject({ operator: '$and', pass: false });
    expect(inClause).toMatchObject({ operator: '$in', expected: ['BUY_WITH_CARD'], pass: true });
    expect(notClause).toMatchObject({ path: 'result.email', operator: '$not', pass: false, children: [{ operator: '$regex', expected: 'example', pass: true }] });

    expect(price).toMatchObject({ path: 'result.totalPriceUsd', operator: '$and', found: 150.5, pass: false });
    expect(price!.children!.map((c) => [c.operator, c.pass])).toEqual([['$gte', true], ['$lt', false]]);

    expect(items).toMatchObject({ path: 'result.items', operator: '$elemMatch', pass: false });
    expect(items!.children!.map((element) => [element.path, element.pass, element.children!.map((c) => c.pass)])).toEqual([
      ['result.items[0]', false, [false, true]],
      ['result.items[1]', false, [true, false]],
    ]);
    expect(items!.children![1]!.children![1]).toMatchObject({ path: 'qty', operator: '$gte', expected: 2, found: 1 });

    expect(nor).toMatchObject({ operator: '$nor', pass: false, children: [{ path: 'result.quantity', operator: '$eq', pass: true }] });
    expect(explanation.failing).toHaveLength(4);
  });

  it('for a matching rule, shows the transformed body, the headers and the signature, with secrets hidden', async () => {
    const env = { CRM_TOKEN: 'tok-resolved-secret', CRM_SECRET: 'sign-resolved-secret' };
    const matching = rule(
      {
        transform: '{ "email": result.email }',
        to: { url: 'https://bob:hunter2@crm.example.com/hook', headers: { Authorization: 'Bearer ${CRM_TOKEN}', 'X-Team': 'growth' } },
        sign: { scheme: 'hmac-sha256-hex', secret: '${CRM_SECRET}' },
      },
      env,
    );
    const explanation = await explainRule(matching, purchaseInput());
    expect(explanation).toMatchObject({ matched: true, clausesPass: true, failing: [], notes: [] });
    const outgoing = explanation.outgoing!;
    expect(outgoing.body).toBe('{"email":"buyer@example.com"}');
    expect(outgoing.url).toBe('https://[redacted]@crm.example.com/hook');
    expect(outgoing.headers).toEqual({
      'content-type': 'application/json',
      Authorization: 'Bearer ${CRM_TOKEN}',
      'X-Team': 'growth',
      'X-Hookrelay-Delivery': PREVIEW_DELIVERY_ID,
      'X-Hookrelay-Rule': matching.id,
      'X-Hookrelay-Timestamp': expect.stringMatching(/^\d{10}$/),
      'webhook-id': PREVIEW_DELIVERY_ID,
      'X-Service-Signature': signHmacSha256Hex(env.CRM_SECRET, outgoing.body),
    });
    expect(outgoing.signing).toEqual({ scheme: 'hmac-sha256-hex', secret: '${CRM_SECRET}', header: 'X-Service-Signature' });
    const text = JSON.stringify(explanation);
    for (const secret of [...Object.values(env), 'hunter2']) expect(text).not.toContain(secret);
  });

  it('for a matching rule whose transform fails, gives the dead reason (renderError: deprecated alias) and says so', async () => {
    const explanation = await explainRule(rule({ transform: 'result.email + 1' }), purchaseInput());
    expect(explanation.matched).toBe(true);
    const { deadReason, renderError } = explanation.outgoing!;
    expect(deadReason).toMatch(/^transform failed at position \d+: T2001 /);
    expect(renderError).toBe(deadReason);
    expect(explanation.notes).toEqual([`the transform fails, so the delivery would be dead-lettered: ${deadReason}`]);
  });

  it('forwards the bytes received when the rule has no transform', async () => {
    const input = purchaseInput();
    const explanation = await explainRule(rule({}), input);
    expect(explanation.outgoing!.body).toBe(input.raw.toString('utf8'));
  });

  it('says a rule is disabled, and whether it would match if enabled', async () => {
    const wouldMatch = await explainRule(rule({ enabled: false }), purchaseInput());
    expect(wouldMatch).toMatchObject({ matched: false, clausesPass: true, enabled: false });
    expect(wouldMatch.notes).toEqual(['the rule is disabled; it would match if it were enabled']);
    const wouldNot = await explainRule(rule({ enabled: false, where: { 'result.quantity': 7 } }), purchaseInput());
    expect(wouldNot.notes).toEqual(['the rule is disabled']);
    expect(wouldNot.outgoing).toBeUndefined();
  });

  it('says when the network guard refuses the destination, using its own lookup', async () => {
    const lookups: string[] = [];
    const guard = createSsrfGuard({
      allowNetworks: [],
      lookup: async (name) => {
        lookups.push(name);
        return [{ address: name === 'internal.example.com' ? '10.1.2.3' : '93.184.216.34' }];
      },
    });
    const checkDestination = destinationCheck(guard, { resolveNames: true });
    const refused = await explainRule(rule({ to: { url: 'https://internal.example.com/hook' } }), purchaseInput(), { checkDestination });
    expect(refused.matched).toBe(true);
    expect(refused.destination).toMatchObject({ checked: true, allowed: false, reason: expect.stringContaining('10.1.2.3') });
    expect(refused.notes[0]).toMatch(/^the network guard refuses the destination \(10\.1\.2\.3 is .*\): the delivery would be dead-lettered$/);
    const allowed = await explainRule(rule({}), purchaseInput(), { checkDestination });
    expect(allowed.destination).toEqual({ checked: true, allowed: true, addresses: ['93.184.216.34'] });
    expect(lookups).toEqual(['internal.example.com', 'hooks.example.com']);

    const literalOnly = destinationCheck(guard, { resolveNames: false });
    expect((await explainRule(rule({}), purchaseInput(), { checkDestination: literalOnly })).destination).toMatchObject({ checked: false });
    expect((await explainRule(rule({ to: { url: 'http://127.0.0.1:9/x' } }), purchaseInput(), { checkDestination: literalOnly })).destination).toMatchObject({ checked: true, allowed: false });
    expect(lookups).toHaveLength(2);
  });

  it('explains every rule of a set, enabled or not, or only the one asked for', async () => {
    const ruleSet: RuleSet = { rules: [rule({}), rule({ id: 'off', enabled: false })], hash: 'abc', loadedAt: new Date(), files: [] };
    expect((await explainRules(ruleSet, purchaseInput())).map((e) => [e.ruleId, e.matched])).toEqual([['r', true], ['off', false]]);
    expect((await explainRules(ruleSet, purchaseInput(), { ruleId: 'off' })).map((e) => e.ruleId)).toEqual(['off']);
  });
});

describe('mismatchReason', () => {
  it('names every failing clause in one line, and a disabled rule, for replay refusals and dry runs', () => {
    const where = { 'result.paymentMethod': 'BUY_WITH_CRYPTO', 'result.couponCode': { $exists: true } };
    expect(mismatchReason(rule({ on: ['transfer:failed'], source: 'staging', where }), purchaseInput())).toBe(
      'event $in ["transfer:failed"]: found "transfer:succeeded"; source $eq "staging": found "checkout"; where result.paymentMethod $eq "BUY_WITH_CRYPTO": found "BUY_WITH_CARD"; where result.couponCode $exists true: absent',
    );
    expect(mismatchReason(rule({ enabled: false }), purchaseInput())).toBe('the rule is disabled; it would match if it were enabled');
    expect(mismatchReason(rule({ enabled: false, where: { 'result.quantity': 7 } }), purchaseInput())).toBe('where result.quantity $eq 7: found 2; the rule is disabled');
  });
});

describe('maskUrlCredentials', () => {
  it('redacts credentials written in a URL and keeps ones made of ${ENV} references', () => {
    expect(maskUrlCredentials('https://bob:hunter2@crm.example.com/a@b')).toBe('https://[redacted]@crm.example.com/a@b');
    expect(maskUrlCredentials('https://token@crm.example.com/')).toBe('https://[redacted]@crm.example.com/');
    expect(maskUrlCredentials('https://${USER}:${PASS}@crm.example.com/')).toBe('https://${USER}:${PASS}@crm.example.com/');
    expect(maskUrlCredentials('https://crm.example.com/path@x?q=a@b')).toBe('https://crm.example.com/path@x?q=a@b');
  });
});
