import { describe, expect, it } from 'vitest';
import { MAX_RETRY_AFTER_MS, parseRetryAfter } from '../../../src/delivery/retry-after.js';

const now = Date.parse('2025-01-01T00:00:00Z');

describe('parseRetryAfter', () => {
  it.each([
    [undefined, undefined],
    ['0', 0],
    ['30', 30_000],
    [' 30 ', 30_000],
    ['Wed, 01 Jan 2025 00:00:30 GMT', 30_000],
    ['Wednesday, 01-Jan-25 00:01:00 GMT', 60_000],
    ['Tue, 31 Dec 2024 00:00:00 GMT', 0],
    ['86401', MAX_RETRY_AFTER_MS],
    ['1.5', undefined],
    ['-1', undefined],
    ['12', 12_000],
    ['', undefined],
    ['later', undefined],
  ])('%o → %o', (value, expected) => {
    expect(parseRetryAfter(value, now)).toBe(expected);
  });
});
