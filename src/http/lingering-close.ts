import type { Socket } from 'node:net';

/** How long and how much a refused upload is still read (and dropped) after its answer, at most. */
export interface LingerLimits {
  maxMs: number;
  maxBytes: number;
}

/** Two seconds, as Apache lingers: enough for a client to read the answer and stop sending. */
export const LINGER_LIMITS: LingerLimits = { maxMs: 2_000, maxBytes: 16 * 1024 * 1024 };

const CHECK_EVERY_MS = 50;

/**
 * Makes the close after this connection's `Connection: close` answer a lingering one. Node ends such a
 * response with `socket.destroySoon()`; closing a socket whose client is still sending makes the kernel
 * reset the connection, and a client still writing then fails with EPIPE/ECONNRESET and drops the answer
 * it had not read yet. Instead the socket half-closes (the answer and a FIN go out), what the client
 * still sends is read and dropped (Node's parser discards the unread body), and the socket is destroyed
 * when the client closes its side or a limit is reached.
 */
export function lingerOnClose(socket: Socket, limits: LingerLimits = LINGER_LIMITS): void {
  socket.destroySoon = function lingeringClose(this: Socket): void {
    if (this.writable) this.end();
    if (this.destroyed) return;
    const startBytes = this.bytesRead;
    const giveUpAt = Date.now() + limits.maxMs;
    const check = setInterval(() => {
      if (this.bytesRead - startBytes > limits.maxBytes || Date.now() >= giveUpAt) this.destroy();
    }, CHECK_EVERY_MS);
    check.unref();
    this.once('end', () => this.destroy());
    this.once('close', () => clearInterval(check));
  };
}
