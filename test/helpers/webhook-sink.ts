import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedWebhook {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** The exact bytes received, for signature checks. */
  rawBody: Buffer;
  receivedAt: number;
  /** When the exchange ended: answered, or closed by the client. */
  closedAt?: number;
}

export interface WebhookSink {
  url: string;
  received: ReceivedWebhook[];
  /** Resolves once `count` requests arrived (rejects after `timeoutMs`). */
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedWebhook[]>;
  close(): Promise<void>;
}

/** How the sink answers one request: a status (with optional headers and body), or no answer at all. */
export type SinkReply = number | { status: number; headers?: Record<string, string>; body?: string; delayMs?: number } | 'hang';

/**
 * A capturing webhook receiver on 127.0.0.1. `reply(n)` picks the answer to the n-th request (0-based),
 * e.g. to fail the first attempt and accept the retry.
 */
export async function startWebhookSink(reply: (index: number, request: ReceivedWebhook) => SinkReply = () => 200): Promise<WebhookSink> {
  const received: ReceivedWebhook[] = [];
  const waiters: (() => void)[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const index = received.length;
      const request: ReceivedWebhook = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, rawBody: Buffer.concat(chunks), receivedAt: Date.now() };
      res.once('close', () => {
        request.closedAt = Date.now();
      });
      received.push(request);
      for (const wake of waiters.splice(0)) wake();
      const answer = reply(index, request);
      if (answer === 'hang') return;
      const { status, headers = {}, body = '{"ok":true}', delayMs = 0 } = typeof answer === 'number' ? { status: answer } : answer;
      const respond = (): void => void res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(body);
      if (delayMs > 0) setTimeout(respond, delayMs);
      else respond();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}/hooks`,
    received,
    // 15 s: a delivery runs on a thread of lower priority, which a loaded CI machine can hold back for seconds.
    async waitFor(count, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      while (received.length < count) {
        if (Date.now() > deadline) throw new Error(`sink got ${received.length} of ${count} webhooks`);
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          setTimeout(resolve, 50).unref();
        });
      }
      return received;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
