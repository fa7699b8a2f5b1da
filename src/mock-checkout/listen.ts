import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Express } from 'express';

export interface MockCheckoutServer {
  /** e.g. http://127.0.0.1:8090 */
  url: string;
  /** Stops accepting, lets in-flight requests finish (idle keep-alive sockets are dropped), then releases the mock. */
  close(): Promise<void>;
}

const FORCE_CLOSE_AFTER_MS = 5000;

/** Starts an HTTP server for `app` on host:port (0 = any free port) and resolves once it listens. */
export function listenOn(app: Express, port: number, host: string, release: () => Promise<void>): Promise<MockCheckoutServer> {
  const server = createServer(app);
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      const address = server.address() as AddressInfo;
      const hostPart = address.family === 'IPv6' ? `[${address.address}]` : address.address;
      let closing: Promise<void> | undefined;
      resolve({
        url: `http://${hostPart}:${address.port}`,
        close: () => {
          closing ??= new Promise<void>((done) => {
            const force = setTimeout(() => server.closeAllConnections(), FORCE_CLOSE_AFTER_MS).unref();
            server.close(() => {
              clearTimeout(force);
              done();
            });
            server.closeIdleConnections();
          }).then(release);
          return closing;
        },
      });
    });
  });
}
