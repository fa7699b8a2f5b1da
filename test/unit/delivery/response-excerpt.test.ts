import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { readExcerpt, ResponseExcerpt } from '../../../src/delivery/response-excerpt.js';

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

  it('stops reading at the cap and destroys the rest of the stream', async () => {
    let produced = 0;
    const body = new Readable({
      read() {
        produced += 1;
        this.push(Buffer.alloc(1024, 0x61));
      },
    });
    const excerpt = new ResponseExcerpt(4096);
    await readExcerpt(body, excerpt);
    expect(excerpt.text()).toHaveLength(4096);
    expect(body.destroyed).toBe(true);
    expect(produced).toBeLessThan(64);
  });
});
