import { describe, expect, it } from 'vitest';
import { ResponseExcerpt } from '../../../src/delivery/response-excerpt.js';

describe('ResponseExcerpt', () => {
  it.each([
    [['hello'], 10, 'hello'],
    [['hello', ' world'], 8, 'hello wo'],
    [['abc'], 0, ''],
    [['€€'], 4, '€'], // a character cut by the cap is dropped, not mangled
  ])('%o capped at %d → %o', (chunks, cap, expected) => {
    const excerpt = new ResponseExcerpt(cap);
    for (const chunk of chunks) excerpt.add(Buffer.from(chunk));
    expect(excerpt.text()).toBe(expected);
  });

  it('decodes a character split across two chunks of a whole body', () => {
    const euro = Buffer.from('€');
    const excerpt = new ResponseExcerpt(4096);
    excerpt.add(Buffer.concat([Buffer.from('a'), euro.subarray(0, 2)]));
    excerpt.add(Buffer.concat([euro.subarray(2), Buffer.from('b')]));
    expect(excerpt.text()).toBe('a€b');
  });

  it('says when the cap is reached, so the sender stops reading', () => {
    const excerpt = new ResponseExcerpt(4096);
    expect(excerpt.add(Buffer.alloc(4095, 0x61))).toBe(false);
    expect(excerpt.full).toBe(false);
    expect(excerpt.add(Buffer.alloc(1024, 0x61))).toBe(true);
    expect(excerpt.add(Buffer.alloc(1024, 0x62))).toBe(true);
    expect(excerpt.text()).toBe('a'.repeat(4096));
  });
});
