import { describe, expect, it } from 'vitest';
import { checkNesting, nestsDeeperThan } from '../../../src/ingest/nesting.js';

const nested = (levels: number): string => `${'['.repeat(levels)}${']'.repeat(levels)}`;
const bytes = (text: string): Buffer => Buffer.from(text);

describe('nesting depth', () => {
  it('counts object and array levels, not scalars', () => {
    expect(nestsDeeperThan(bytes('1'), 0)).toBe(false);
    expect(nestsDeeperThan(bytes('{"a":[1]}'), 2)).toBe(false);
    expect(nestsDeeperThan(bytes('{"a":[1]}'), 1)).toBe(true);
    expect(nestsDeeperThan(bytes('[[],[],{}]'), 2)).toBe(false);
    expect(nestsDeeperThan(bytes(nested(64)), 64)).toBe(false);
    expect(nestsDeeperThan(bytes(nested(65)), 64)).toBe(true);
  });

  it('ignores brackets inside strings, escaped quotes and backslashes included', () => {
    expect(nestsDeeperThan(bytes(JSON.stringify({ a: '[[[[{{{{', b: 'say \\"[[[["', c: '\\', d: '"[' })), 1)).toBe(false);
    expect(nestsDeeperThan(bytes(JSON.stringify({ a: '\\', b: [[1]] })), 2)).toBe(true);
  });

  it('refuses with too_deeply_nested and the limit', () => {
    expect(() => checkNesting(bytes(nested(5_000)), 64)).toThrow(expect.objectContaining({ code: 'too_deeply_nested', status: 422, details: { maxDepth: 64 } }));
  });
});
