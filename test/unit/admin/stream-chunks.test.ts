import { describe, expect, it } from 'vitest';
import { CHUNK_BYTES, chunkMessages } from '../../../src/admin/api/stream/shared-reads.js';

const message = (id: number, size: number) => ({ id, text: `id: ${id}\n${'x'.repeat(Math.max(0, size - 8))}\n\n` });

describe('chunkMessages', () => {
  it('joins messages in order into chunks of at most CHUNK_BYTES, each naming its last event', () => {
    const messages = Array.from({ length: 40 }, (_, i) => message(i + 1, 5_000));
    const chunks = chunkMessages(messages);
    expect(chunks.length).toBeGreaterThan(1);
    expect(chunks.length).toBeLessThan(messages.length);
    for (const chunk of chunks) expect(chunk.bytes.length).toBeLessThanOrEqual(CHUNK_BYTES);
    expect(Buffer.concat(chunks.map((c) => c.bytes)).toString()).toBe(messages.map((m) => m.text).join(''));
    for (const chunk of chunks) expect(chunk.bytes.toString().endsWith(messages[chunk.lastId - 1]!.text)).toBe(true);
    expect(chunks.at(-1)!.lastId).toBe(40);
  });

  it('gives a message larger than a chunk a chunk of its own, and nothing for no messages', () => {
    const chunks = chunkMessages([message(1, 100), message(2, CHUNK_BYTES * 2), message(3, 100)]);
    expect(chunks.map((c) => [c.lastId, c.bytes.length])).toEqual([[1, 100], [2, CHUNK_BYTES * 2], [3, 100]]);
    expect(chunkMessages([])).toEqual([]);
  });
});
