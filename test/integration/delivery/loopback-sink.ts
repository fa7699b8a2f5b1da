import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { buildConnector } from 'undici';

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: Buffer;
}

export interface LoopbackSink {
  port: number;
  /** http://127.0.0.1:<port> */
  origin: string;
  /** TCP connections accepted, counted before any request is read. */
  connections: number;
  requests: ReceivedRequest[];
  close(): Promise<void>;
}

export type SinkHandler = (req: IncomingMessage, res: ServerResponse, body: Buffer) => void;

/** An HTTP server on 127.0.0.1 (ephemeral port) that records what it receives. */
export async function startLoopbackSink(handler: SinkHandler): Promise<LoopbackSink> {
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      sink.requests.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, body });
      handler(req, res, body);
    });
  });
  server.on('connection', (socket) => {
    sink.connections += 1;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  const sink: LoopbackSink = {
    port,
    origin: `http://127.0.0.1:${port}`,
    connections: 0,
    requests: [],
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
  return sink;
}

/**
 * A connector for the guarded dispatcher that opens real sockets to loopback only and records every
 * target it is asked for. A broken guard then fails a test instead of sending traffic anywhere.
 */
export function loopbackOnlyConnector(): { connector: buildConnector.connector; targets: string[] } {
  const real = buildConnector({ timeout: 2000 });
  const targets: string[] = [];
  const connector: buildConnector.connector = (options, callback) => {
    targets.push(options.hostname);
    const loopback = /^127\.\d+\.\d+\.\d+$/.test(options.hostname) || options.hostname === '::1';
    if (!loopback) {
      callback(new Error(`test connector refuses non-loopback target ${options.hostname}`), null);
      return;
    }
    real(options, callback);
  };
  return { connector, targets };
}
