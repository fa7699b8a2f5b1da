import { describe, expect, it } from 'vitest';
import { stopPretenuring } from '../../../src/delivery/pretenuring.js';

describe('stopPretenuring', () => {
  it('turns V8 allocation-site pretenuring off', () => {
    const set: string[] = [];
    expect(stopPretenuring(['--max-semi-space-size=4'], (flags) => set.push(flags))).toBe(true);
    expect(set).toEqual(['--no-allocation-site-pretenuring']);
  });

  it("leaves an operator's own setting alone, either way and in either spelling", () => {
    for (const arg of ['--allocation-site-pretenuring', '--no-allocation-site-pretenuring', '--allocation_site_pretenuring']) {
      const set: string[] = [];
      expect(stopPretenuring([arg], (flags) => set.push(flags))).toBe(false);
      expect(set).toEqual([]);
    }
  });
});
