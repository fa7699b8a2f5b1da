import { createConnection, createServer, type AddressInfo, type Socket } from 'node:net';

/**
 * A loopback TCP proxy in front of a server (PostgreSQL in the tests) that can act as a network partition:
 * `blackhole()` stops forwarding in both directions without closing or resetting anything, so neither side
 * hears of a failure (as when packets are dropped); connections opened meanwhile are accepted and never
 * answered. `release()` forwards again, what was held included, as TCP retransmission would after the
 * partition heals.
 */
export interface TcpProxy {
  /** Port on 127.0.0.1 that leads to the target. */
  port: number;
  /** `url` with its host and port replaced by the proxy's. */
  urlFor(url: string): string;
  blackhole(): void;
  release(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const pairs = new Set<[Socket, Socket]>();
  let holding = false;
  const server = createServer((client) => {
    const upstream = createConnection({ host: target.host, port: target.port });
    const pair: [Socket, Socket] = [client, upstream];
    pairs.add(pair);
    const end = (): void => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
    client.pipe(upstream);
    upstream.pipe(client);
    if (holding) hold(pair);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  // Unpiped and paused, the bytes wait in the sockets' buffers: nothing is lost, nothing is answered.
  const hold = ([client, upstream]: [Socket, Socket]): void => {
    client.unpipe(upstream);
    upstream.unpipe(client);
    client.pause();
    upstream.pause();
  };
  return {
    port,
    urlFor: (url) => {
      const proxied = new URL(url);
      proxied.hostname = '127.0.0.1';
      proxied.port = String(port);
      return proxied.toString();
    },
    blackhole: () => {
      holding = true;
      for (const pair of pairs) hold(pair);
    },
    release: () => {
      holding = false;
      for (const [client, upstream] of pairs) {
        client.pipe(upstream);
        upstream.pipe(client);
      }
    },
    close: async () => {
      for (const [client, upstream] of pairs) {
        client.destroy();
        upstream.destroy();
      }
      pairs.clear();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
