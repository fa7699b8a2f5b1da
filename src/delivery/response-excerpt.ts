/**
 * Collects at most `maxBytes` of a response body. The decoder holds back a multi-byte character cut
 * in half by the cap instead of emitting a replacement character.
 */
export class ResponseExcerpt {
  private readonly chunks: Buffer[] = [];
  private size = 0;

  constructor(private readonly maxBytes: number) {}

  get full(): boolean {
    return this.size >= this.maxBytes;
  }

  /** Keeps what fits; returns true once the cap is reached (stop reading then). */
  add(chunk: Buffer): boolean {
    const room = this.maxBytes - this.size;
    if (room > 0) {
      const kept = chunk.length > room ? chunk.subarray(0, room) : chunk;
      this.chunks.push(kept);
      this.size += kept.length;
    }
    return this.full;
  }

  text(): string {
    if (this.size === 0) return '';
    const bytes = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.size);
    // A whole body decodes as it is; only a body cut at the cap may end inside a character.
    return this.full ? new TextDecoder('utf-8').decode(bytes, { stream: true }) : bytes.toString('utf8');
  }
}
