import { describe, expect, it } from 'vitest';
import { HEAP_GROWING_PERCENT, limitHeapGrowth } from '../../../src/commands/heap-growth.js';

describe('limitHeapGrowth', () => {
  it('sets V8 heap growing percent for the receiver', () => {
    const set: string[] = [];
    expect(limitHeapGrowth(['--enable-source-maps'], (flags) => set.push(flags))).toBe(true);
    expect(set).toEqual([`--heap-growing-percent=${HEAP_GROWING_PERCENT}`]);
  });

  it("leaves an operator's own setting alone, in either spelling", () => {
    for (const arg of ['--heap-growing-percent=50', '--heap_growing_percent=50']) {
      const set: string[] = [];
      expect(limitHeapGrowth([arg], (flags) => set.push(flags))).toBe(false);
      expect(set).toEqual([]);
    }
  });
});
