import { describe, expect, it } from 'vitest';
import { exampleValue } from '../../../src/schema/example-value.js';
import { walkFields } from '../../../src/schema/field-paths.js';
import { JSON_TYPE_BIT, jsonTypeOf, typesOfBits } from '../../../src/schema/json-types.js';
import { lastStep } from '../../../src/schema/schema-paths.js';
import { sampleTransferSucceeded } from '../../../src/samples/transfer-succeeded.js';

const limits = { maxDepth: 16, maxArrayElements: 100 };

/** Every path the walk visits, in first-visit order, with the types met there. */
function sightings(body: unknown, walkLimits = limits): Map<string, number> {
  const seen = new Map<string, number>();
  walkFields(body, walkLimits, (path, value) => {
    seen.set(path, (seen.get(path) ?? 0) | JSON_TYPE_BIT[jsonTypeOf(value)]);
    return true;
  });
  return seen;
}

describe('walkFields', () => {
  it('names every field path with its types, array elements folded into one path', () => {
    const fields = sightings({ event: 'x', result: { id: 'a', n: 1.5, tags: ['a', 2], tokens: [{ tokenId: '1' }, { tokenId: 2, extra: null }], 'a.b': true } });
    const types = Object.fromEntries([...fields].map(([path, bits]) => [path, [...typesOfBits(bits)].sort()]));
    expect(types).toEqual({
      event: ['string'],
      result: ['object'],
      'result.id': ['string'],
      'result.n': ['number'],
      'result.tags': ['array'],
      'result.tags[]': ['number', 'string'],
      'result.tokens': ['array'],
      'result.tokens[]': ['object'],
      'result.tokens[].tokenId': ['number', 'string'],
      'result.tokens[].extra': ['null'],
      'result["a.b"]': ['boolean'],
    });
  });

  it('stays within its bounds: depth and array elements; the visitor skips what lies below a value', () => {
    let deep: unknown = 'leaf';
    for (let i = 0; i < 100; i += 1) deep = { d: deep };
    expect([...sightings(deep, { ...limits, maxDepth: 5 }).keys()]).toEqual(['d', 'd.d', 'd.d.d', 'd.d.d.d', 'd.d.d.d.d']);
    expect(typesOfBits(sightings({ a: [1, 2, 3, 'x'] }, { ...limits, maxArrayElements: 3 }).get('a[]')!)).toEqual(['number']);
    const visited: string[] = [];
    walkFields({ a: { b: 1 }, c: [{ d: 2 }], e: 3 }, limits, (path) => {
      visited.push(path);
      return path !== 'a' && path !== 'c[]';
    });
    expect(visited).toEqual(['a', 'c', 'c[]', 'e']);
  });

  it('names the same paths when it meets the same keys again, and keys that are data fold into `*`', () => {
    const body = { result: { claimedTokens: { transactionHashes: { '0xab': ['1'], '0xcd': ['2'] } }, 'odd key': 1 } };
    const first = [...sightings(body).keys()];
    // The second walk finds its child paths already worked out: the same answer.
    expect([...sightings(body).keys()]).toEqual(first);
    expect(first).toEqual(['result', 'result.claimedTokens', 'result.claimedTokens.transactionHashes', 'result.claimedTokens.transactionHashes.*', 'result.claimedTokens.transactionHashes.*[]', 'result["odd key"]']);
    // An array's elements and a key spelled `[]` are different paths, whichever was met first.
    expect([...sightings({ x: { '[]': 1 }, y: [2] }).keys()]).toEqual(['x', 'x["[]"]', 'y', 'y[]']);
    expect([...sightings({ x: [1], y: { '[]': 2 } }).keys()]).toEqual(['x', 'x[]', 'y', 'y["[]"]']);
  });

  it('gives each set of types as one array in a fixed order', () => {
    expect(typesOfBits(0)).toEqual([]);
    expect(typesOfBits(1 | 2)).toEqual(['string', 'number']);
    expect(typesOfBits(63)).toEqual(['string', 'number', 'boolean', 'null', 'object', 'array']);
    expect(typesOfBits(2 | 32)).toBe(typesOfBits(32 | 2));
  });

  it('walks the sample transfer body', () => {
    const fields = sightings(sampleTransferSucceeded());
    expect(fields.has('result.totalPriceUsd')).toBe(true);
    expect(fields.has('result.email')).toBe(true);
  });
});

describe('lastStep', () => {
  it('splits a path into its parent and last step', () => {
    expect(lastStep('a.b')).toEqual({ parent: 'a', step: { key: 'b' } });
    expect(lastStep('a.b[]')).toEqual({ parent: 'a.b', step: { items: true } });
    expect(lastStep('a["x.y"]')).toEqual({ parent: 'a', step: { key: 'x.y' } });
    expect(lastStep('top')).toEqual({ parent: '', step: { key: 'top' } });
  });
});

describe('exampleValue', () => {
  it('masks personal data by default and truncates long strings', () => {
    expect(exampleValue('result.email', 'ann@example.com', true)).toBe('"***@example.com"');
    expect(exampleValue('result.walletAddress', '0x52908400098527886E0F7030069857D2E4169EE7', true)).toBe('"0x5290…9EE7"');
    expect(exampleValue('result.buyerName', 'Ann Smith', true)).toBe('"*** (9 characters)"');
    expect(exampleValue('result.email', 'ann@example.com', false)).toBe('"ann@example.com"');
    expect(exampleValue('result.note', 'x'.repeat(500), false).length).toBeLessThanOrEqual(82);
    expect(exampleValue('result.n', 12.5, true)).toBe('12.5');
    expect(exampleValue('result.clientIp', '10.0.0.1', true)).toBe('"*** (8 characters)"');
    expect(exampleValue('result.membership', 'gold', true)).toBe('"gold"');
  });
});

describe('maps', () => {
  it('folds the entries of an object keyed by data (hashes, numbers, uuids) into one path', () => {
    const fields = sightings({ m: { '0xabc': [1], '0xdef': [2], '42': true } });
    expect([...fields.keys()]).toEqual(['m', 'm.*', 'm.*[]']);
    expect(lastStep('m.*')).toEqual({ parent: 'm', step: { anyKey: true } });
  });
});
