import net, { type AddressInfo, type Socket } from 'node:net';

/** One request as the fault server read it. */
export interface FaultRequest {
  index: number;
  head: string;
  headers: Record<string, string>;
  body: Buffer;
  receivedAt: number;
}

/**
 * What the fault server does with one request, on the raw socket: answer, stall, reset, trickle. It must
 * end or destroy the socket itself (answers carry `Connection: close`).
 */
export type FaultBehaviour = (socket: Socket, request: FaultRequest, server: FaultServer) => void;

export interface FaultServer {
  port: number;
  url: string;
  requests: FaultRequest[];
  /** Response bytes written, over all connections. */
  bytesWritten: () => number;
  /** Timers and intervals a behaviour starts; cleared on close. */
  timers: Set<NodeJS.Timeout>;
  close(): Promise<void>;
}

function parseHeaders(head: string): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const line of head.split('\r\n').slice(1)) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return headers;
}

/**
 * A raw TCP "HTTP" server on 127.0.0.1 whose answers are fully scripted, including the broken ones an
 * HTTP library would never produce: no response, half a body, a reset, one byte per second.
 */
export async function startFaultServer(behaviour: FaultBehaviour): Promise<FaultServer> {
  const requests: FaultRequest[] = [];
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();
  let written = 0;
  let closedBytes = 0;

  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
    socket.on('close', () => {
      closedBytes += socket.bytesWritten;
      sockets.delete(socket);
    });
    let data = Buffer.alloc(0);
    let handled = false;
    socket.on('data', (chunk: Buffer) => {
      if (handled) return;
      data = Buffer.concat([data, chunk]);
      const headEnd = data.indexOf('\r\n\r\n');
      if (headEnd < 0) return;
      const head = data.subarray(0, headEnd).toString('latin1');
      const headers = parseHeaders(head);
      const length = Number(headers['content-length'] ?? 0);
      if (data.length < headEnd + 4 + length) return;
      handled = true;
      const request: FaultRequest = { index: requests.length, head, headers, body: data.subarray(headEnd + 4, headEnd + 4 + length), receivedAt: Date.now() };
      requests.push(request);
      behaviour(socket, request, faultServer);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  const faultServer: FaultServer = {
    port,
    url: `http://127.0.0.1:${port}/hook`,
    requests,
    timers,
    bytesWritten: () => {
      written = closedBytes;
      for (const socket of sockets) written += socket.bytesWritten;
      return written;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const timer of timers) clearTimeout(timer);
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
  return faultServer;
}

/** A complete response: status line, headers (plus Content-Length and Connection: close), body; then the socket ends. */
export function respond(socket: Socket, status: number, headers: Record<string, string> = {}, body = '{"ok":true}'): void {
  const all = { 'content-type': 'application/json', ...headers, 'content-length': String(Buffer.byteLength(body)), connection: 'close' };
  const head = `HTTP/1.1 ${status} X\r\n${Object.entries(all).map(([k, v]) => `${k}: ${v}\r\n`).join('')}\r\n`;
  socket.end(head + body);
}

/** Headers and the first part of a body, then nothing: the connection stays open, silent. */
export function stallMidBody(socket: Socket, status: number, declaredLength = 1000): void {
  socket.write(`HTTP/1.1 ${status} X\r\ncontent-type: text/plain\r\ncontent-length: ${declaredLength}\r\n\r\npartial body, then silence`);
}

/** Writes `text` one byte per `intervalMs` (the status line too), for as long as the peer listens. */
export function trickle(socket: Socket, server: FaultServer, text: string, intervalMs = 1000): void {
  let offset = 0;
  const timer = setInterval(() => {
    if (socket.destroyed || offset >= text.length) {
      clearInterval(timer);
      server.timers.delete(timer);
      return;
    }
    socket.write(text[offset++]!);
  }, intervalMs);
  server.timers.add(timer);
}

/** A body of `totalBytes` streamed with backpressure (so the server side holds one 64 KiB chunk at a time). */
export function hugeBody(socket: Socket, status: number, totalBytes: number): void {
  socket.write(`HTTP/1.1 ${status} X\r\ncontent-type: text/plain\r\ncontent-length: ${totalBytes}\r\nconnection: close\r\n\r\n`);
  const chunk = Buffer.alloc(64 * 1024, 'x');
  let sent = 0;
  const pump = (): void => {
    while (sent < totalBytes && !socket.destroyed) {
      const piece = sent + chunk.length <= totalBytes ? chunk : chunk.subarray(0, totalBytes - sent);
      sent += piece.length;
      if (!socket.write(piece)) {
        socket.once('drain', pump);
        return;
      }
    }
    if (!socket.destroyed) socket.end();
  };
  pump();
}
