import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { eventText, fromEventText } from '../../../src/store/storable-text.js';
import { fromKeyBytes, keyText } from '../../../src/store/sqlite/key-text.js';

// PostgreSQL text holds neither a lone surrogate nor NUL.
const storable = (text: string): boolean => !/[\ud800-\udfff\u0000]/u.test(text);

describe('eventText', () => {
  it('keeps ordinary values as they are', () => {
    for (const value of ['', 'tr_123', 'transfer:succeeded', '\ufffd', 'e\u0301', '\ud83d\ude00']) expect(eventText(value)).toBe(value);
    expect(eventText(null)).toBeNull();
  });

  it('escapes lone surrogates, NUL and values that start like an escaped one, into storable text', () => {
    for (const value of ['T-\ud800', 'a\u0000b', '\u0001', '\u0001"T-\\ud800"']) {
      expect(eventText(value)).not.toBe(value);
      expect(storable(eventText(value))).toBe(true);
      expect(fromEventText(eventText(value))).toBe(value);
    }
    expect(eventText('T-\ud800')).not.toBe(eventText('T-\ufffd'));
  });

  it('is one-to-one and read back exactly, for any string', () => {
    fc.assert(fc.property(fc.string({ unit: 'binary' }), fc.string({ unit: 'binary' }), (a, b) => {
      expect(storable(eventText(a))).toBe(true);
      expect(fromEventText(eventText(a))).toBe(a);
      if (a !== b) expect(eventText(a)).not.toBe(eventText(b));
    }), { numRuns: 500 });
  });
});

describe('fromKeyBytes (SQLite)', () => {
  it('reads back every string keyText bound', () => {
    fc.assert(fc.property(fc.string({ unit: 'binary' }), (value) => {
      const bound = keyText(value);
      expect(fromKeyBytes(Buffer.isBuffer(bound) ? bound : Buffer.from(bound, 'utf8'))).toBe(value);
    }), { numRuns: 500 });
  });
});
