import { describe, expect, it } from 'vitest';
import { compileMatcher, type MatchCriteria, type RuleMatcher } from '../../../src/rules/matcher.js';
import { purchase, purchaseInput } from './rule-dir-fixture.js';

function matcher(criteria: Partial<MatchCriteria>): RuleMatcher {
  const compiled = compileMatcher({ on: ['transfer:succeeded'], where: {}, enabled: true, ...criteria });
  if (!compiled.ok) throw new Error(JSON.stringify(compiled.issues));
  return compiled.matcher;
}

const whereMatches = (where: Record<string, unknown>, body: unknown = purchase) =>
  matcher({ where }).matches(purchaseInput({ body }));

describe('where operators on the body', () => {
  it('compares exact values and nested dotted paths', () => {
    expect(whereMatches({ 'result.paymentMethod': 'BUY_WITH_CARD' })).toBe(true);
    expect(whereMatches({ 'result.paymentMethod': 'BUY_WITH_CRYPTO' })).toBe(false);
    expect(whereMatches({ 'result.paymentMethod': { $eq: 'BUY_WITH_CARD' } })).toBe(true);
    expect(whereMatches({ result: { paymentMethod: 'BUY_WITH_CARD' } })).toBe(false); // exact object, not a partial
  });

  it('compares numbers with $gte/$lt, and never a number with a string', () => {
    expect(whereMatches({ 'result.totalPriceUsd': { $gte: 100 } })).toBe(true);
    expect(whereMatches({ 'result.totalPriceUsd': { $gte: 150.5 } })).toBe(true);
    expect(whereMatches({ 'result.totalPriceUsd': { $gte: 151 } })).toBe(false);
    expect(whereMatches({ 'result.totalPriceUsd': { $gt: 100, $lt: 200 } })).toBe(true);
    expect(whereMatches({ 'result.totalPriceUsd': { $gte: '100' } })).toBe(false);
  });

  it('tests membership with $in and $nin', () => {
    expect(whereMatches({ 'result.paymentMethod': { $in: ['BUY_WITH_CARD', 'BUY_WITH_CRYPTO'] } })).toBe(true);
    expect(whereMatches({ 'result.paymentMethod': { $nin: ['BUY_WITH_CARD'] } })).toBe(false);
  });

  it('tells present from missing fields with $exists', () => {
    expect(whereMatches({ 'result.email': { $exists: true } })).toBe(true);
    expect(whereMatches({ 'result.couponCode': { $exists: false } })).toBe(true);
    expect(whereMatches({ 'result.couponCode': { $exists: true } })).toBe(false);
  });

  it('treats a missing field as not matching a value', () => {
    expect(whereMatches({ 'result.couponCode': 'SPRING' })).toBe(false);
    expect(whereMatches({ 'result.nested.deeper': { $gte: 1 } })).toBe(false);
  });

  it('matches strings with $regex and $options', () => {
    expect(whereMatches({ 'result.email': { $regex: '@example\\.com$' } })).toBe(true);
    expect(whereMatches({ 'result.email': { $regex: '^BUYER@', $options: 'i' } })).toBe(true);
    expect(whereMatches({ 'result.email': { $regex: '^BUYER@' } })).toBe(false);
  });

  it('matches array elements directly and with $elemMatch, $size and $all', () => {
    expect(whereMatches({ 'result.claimedTokens.tokenIds': '102' })).toBe(true);
    expect(whereMatches({ 'result.claimedTokens.tokenIds': '999' })).toBe(false);
    expect(whereMatches({ 'result.claimedTokens.tokenIds': { $size: 2 } })).toBe(true);
    expect(whereMatches({ 'result.claimedTokens.tokenIds': { $all: ['101', '102'] } })).toBe(true);
    const order = { result: { items: [{ sku: 'A', qty: 1 }, { sku: 'B', qty: 5 }] } };
    expect(whereMatches({ 'result.items': { $elemMatch: { sku: 'B', qty: { $gte: 5 } } } }, order)).toBe(true);
    expect(whereMatches({ 'result.items': { $elemMatch: { sku: 'A', qty: { $gte: 5 } } } }, order)).toBe(false);
    expect(whereMatches({ 'result.items.sku': 'B' }, order)).toBe(true);
  });

  it('combines clauses with $or, $and and $not', () => {
    expect(whereMatches({ $or: [{ 'result.quantity': 5 }, { 'result.totalPriceUsd': { $gt: 100 } }] })).toBe(true);
    expect(whereMatches({ $and: [{ 'result.quantity': 2 }, { 'result.totalPriceUsd': { $gt: 1000 } }] })).toBe(false);
    expect(whereMatches({ 'result.quantity': { $not: { $gt: 5 } } })).toBe(true);
  });

  it('matches everything when where is empty', () => {
    expect(whereMatches({}, { anything: true })).toBe(true);
  });
});

describe('event, source and enabled', () => {
  it('takes only the listed events, or every event with "*"', () => {
    const rule = matcher({ on: ['transfer:succeeded', 'transfer:failed'] });
    expect(rule.matches(purchaseInput({ event: 'transfer:failed' }))).toBe(true);
    expect(rule.matches(purchaseInput({ event: 'checkout:created' }))).toBe(false);
    expect(matcher({ on: ['*'] }).matches(purchaseInput({ event: 'checkout:created' }))).toBe(true);
  });

  it('takes every source unless one is named', () => {
    expect(matcher({}).matches(purchaseInput({ source: 'staging' }))).toBe(true);
    const rule = matcher({ source: 'checkout' });
    expect(rule.matches(purchaseInput({ source: 'checkout' }))).toBe(true);
    expect(rule.matches(purchaseInput({ source: 'staging' }))).toBe(false);
  });

  it('never matches when disabled', () => {
    expect(matcher({ enabled: false }).matches(purchaseInput())).toBe(false);
  });
});

describe('compile-time checks', () => {
  const issues = (where: Record<string, unknown>) => {
    const compiled = compileMatcher({ on: ['*'], where, enabled: true });
    return compiled.ok ? [] : compiled.issues;
  };

  it('rejects unknown operators with their path', () => {
    expect(issues({ 'result.totalPriceUsd': { $gtee: 100 } })).toEqual([
      { path: ['result.totalPriceUsd'], key: '$gtee', message: 'unknown operator $gtee (did you mean "$gte"?)' },
    ]);
    expect(issues({ $or: [{ a: 1 }, { b: { $foo: 1 } }] })).toEqual([{ path: ['$or', 1, 'b'], key: '$foo', message: 'unknown operator $foo' }]);
  });

  it('refuses $where, which would run code', () => {
    expect(issues({ $where: 'this.result.quantity > 1' })[0]?.message).toMatch(/^\$where is not allowed/);
  });

  it('checks operator arguments', () => {
    expect(issues({ a: { $in: 'x' } })[0]?.message).toBe('$in needs a list of values');
    expect(issues({ a: { $exists: 'yes' } })[0]?.message).toBe('$exists needs true or false');
    expect(issues({ a: { $regex: '(' } })[0]?.message).toMatch(/^\$regex "\(" is not a valid RE2 regular expression/);
    expect(issues({ a: { $type: 'date' } })[0]?.message).toMatch(/^\$type needs one of/);
    expect(issues({ $or: [] })[0]?.message).toBe('$or needs a non-empty list of conditions');
    expect(issues({ a: { $gte: 1, b: 2 } })[0]?.message).toBe('cannot mix operators ($gte) and field names (b) in one object');
  });
});
