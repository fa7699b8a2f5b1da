/**
 * The bytes of webhook bodies held at once, over every request in flight. A body must be read whole before
 * its signature can be checked, so anyone who can reach the port can make the receiver hold memory; this
 * caps the total. A request reserves its declared Content-Length before its body is read (a chunked one,
 * each chunk as it arrives) and gives it back when its answer is decided; a reservation that does not fit
 * is refused, and the request is answered 503 `server_busy` without reading more.
 */
export class BodyBudget {
  private held = 0;

  constructor(readonly maxBytes: number) {}

  /** Reserves `bytes` if they fit under the cap; false (nothing reserved) otherwise. */
  tryReserve(bytes: number): boolean {
    if (this.held + bytes > this.maxBytes) return false;
    this.held += bytes;
    return true;
  }

  release(bytes: number): void {
    this.held -= bytes;
  }

  /** Bytes reserved now (the `hookrelay_ingest_buffered_bytes` gauge). */
  get bufferedBytes(): number {
    return this.held;
  }
}
