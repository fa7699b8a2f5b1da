import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../../src/errors.js';

const doc = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8');
const documented = new Map(
  [...doc.matchAll(/^\| `([a-z_]+)` \| (\d{3}) \|/gm)].map((m) => [m[1]!, Number(m[2])]),
);

describe('docs/errors.md', () => {
  it('documents every error code with its status', () => {
    const inCode = Object.entries(ERROR_CODES).map(([code, { status }]) => [code, status]);
    expect(inCode.filter(([code, status]) => documented.get(code as string) !== status)).toEqual([]);
  });

  it('documents no code that does not exist', () => {
    expect([...documented.keys()].filter((code) => !(code in ERROR_CODES))).toEqual([]);
  });
});
