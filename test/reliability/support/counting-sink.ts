import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface SinkDelivery {
  /** X-Hookrelay-Delivery of the request (the same on every attempt of one delivery). */
  deliveryId: string;
  /** webhook-id of the request; must equal deliveryId. */
  webhookId: string;
  bodySha256: string;
  body: Buffer;
  receivedAt: number;
}

export interface CountingSink {
  url: string;
  /** Every request, in arrival order. */
  received: SinkDelivery[];
  /** Requests received per delivery id. */
  countOf(deliveryId: string): number;
  /** Delivery ids seen more than once, and how many requests beyond the first they got in total. */
  duplicates(): { ids: number; extraRequests: number };
  /** Delivery ids whose request has arrived but not been answered yet (an attempt in flight). */
  inFlight(): string[];
  close(): Promise<void>;
}

/**
 * A loopback webhook receiver that counts requests per delivery id, so at-least-once delivery can be
 * checked (every id at least once) and duplicates measured. `delayMs` holds each answer back, keeping
 * attempts in flight for a while.
 */
export async function startCountingSink(options: { delayMs?: () => number; status?: () => number } = {}): Promise<CountingSink> {
  const received: SinkDelivery[] = [];
  const counts = new Map<string, number>();
  const inFlight = new Map<ServerResponse, string>();
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const deliveryId = String(req.headers['x-hookrelay-delivery'] ?? '');
      received.push({ deliveryId, webhookId: String(req.headers['webhook-id'] ?? ''), bodySha256: createHash('sha256').update(body).digest('hex'), body, receivedAt: Date.now() });
      counts.set(deliveryId, (counts.get(deliveryId) ?? 0) + 1);
      inFlight.set(res, deliveryId);
      res.on('close', () => inFlight.delete(res));
      const answer = (): void => {
        if (!res.destroyed) res.writeHead(options.status?.() ?? 200, { 'content-type': 'application/json' }).end('{"ok":true}');
      };
      const delay = options.delayMs?.() ?? 0;
      if (delay <= 0) answer();
      else {
        const timer = setTimeout(() => {
          timers.delete(timer);
          answer();
        }, delay);
        timers.add(timer);
      }
    });
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    countOf: (id) => counts.get(id) ?? 0,
    duplicates() {
      let ids = 0;
      let extraRequests = 0;
      for (const count of counts.values()) {
        if (count > 1) {
          ids += 1;
          extraRequests += count - 1;
        }
      }
      return { ids, extraRequests };
    },
    inFlight: () => [...inFlight.values()],
    close: () =>
      new Promise<void>((resolve) => {
        for (const timer of timers) clearTimeout(timer);
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
