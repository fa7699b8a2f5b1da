import { describe, expect, it } from 'vitest';
import { didYouMean, nearest } from '../../../src/rules/did-you-mean.js';
import { allowedKeysAt } from '../../../src/rules/near-key.js';
import { ruleSchema } from '../../../src/rules/schema.js';

describe('nearest', () => {
  it('finds a key within two edits, ignoring case', () => {
    expect(nearest('wehre', ['id', 'on', 'where', 'to'])).toBe('where');
    expect(nearest('Transform', ['transform', 'timeout'])).toBe('transform');
    expect(nearest('$gtee', ['$gt', '$gte', '$lte'])).toBe('$gte');
  });

  it('suggests nothing for an unrelated word, and allows one edit only in words of up to four characters', () => {
    expect(nearest('destination', ['id', 'on', 'where', 'to'])).toBeUndefined();
    expect(nearest('ix', ['id', 'on'])).toBe('id');
    expect(nearest('xy', ['id', 'on'])).toBeUndefined();
    expect(nearest('$foo', ['$or', '$in'])).toBeUndefined();
    expect(didYouMean('xy', ['id'])).toBe('');
    expect(didYouMean('methd', ['method'])).toBe(' (did you mean "method"?)');
  });
});

describe('allowedKeysAt', () => {
  it('lists the keys of the rule and of nested objects', () => {
    expect(allowedKeysAt(ruleSchema, {}, [])).toEqual(expect.arrayContaining(['id', 'on', 'where', 'to', 'sign', 'retry']));
    expect(allowedKeysAt(ruleSchema, { to: {} }, ['to']).sort()).toEqual(['forwardHeaders', 'headers', 'method', 'url']);
    expect(allowedKeysAt(ruleSchema, { retry: {} }, ['retry']).sort()).toEqual(['retryOn', 'schedule']);
  });

  it('takes the signing scheme the value names', () => {
    expect(allowedKeysAt(ruleSchema, { sign: { scheme: 'hmac-sha256-hex' } }, ['sign']).sort()).toEqual(['header', 'scheme', 'secret']);
    expect(allowedKeysAt(ruleSchema, { sign: { scheme: 'standard-webhooks' } }, ['sign']).sort()).toEqual(['scheme', 'secret']);
  });
});
