import { createServer, type Server } from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { lingerOnClose, type LingerLimits } from '../../../src/http/lingering-close.js';

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

/** A server that refuses every upload unread with a 413 and a lingering close. */
async function refusingServer(limits: LingerLimits): Promise<number> {
  server = createServer((req, res) => {
    lingerOnClose(req.socket, limits);
    const body = '{"error":{"code":"payload_too_large"}}';
    res.writeHead(413, { 'content-type': 'application/json', 'content-length': body.length, connection: 'close' });
    res.end(body);
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

/**
 * Uploads without end until the server hangs up, ignoring its FIN (a client that does not read while it
 * sends); resolves with what came back and how much was sent.
 */
function endlessUpload(port: number): Promise<{ answer: string; sent: number; error?: string }> {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host: '127.0.0.1', allowHalfOpen: true });
    let answer = '';
    let sent = 0;
    let error: string | undefined;
    const chunk = Buffer.alloc(16 * 1024, 0x20);
    const pump = (): void => {
      while (!socket.destroyed && socket.writable) {
        sent += chunk.length;
        if (!socket.write(chunk)) {
          socket.once('drain', () => setImmediate(pump));
          return;
        }
      }
    };
    socket.on('data', (data: Buffer) => (answer += data.toString()));
    socket.on('error', (err: NodeJS.ErrnoException) => (error ??= err.code));
    socket.on('close', () => resolve({ answer, sent, error }));
    socket.on('connect', () => {
      socket.write('POST /webhooks/checkout HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000000000\r\n\r\n');
      setTimeout(pump, 1);
    });
  });
}

describe('lingering close after an early refusal', () => {
  it('keeps reading a client that never stops sending only up to the byte limit, after it had the whole answer', async () => {
    const port = await refusingServer({ maxMs: 60_000, maxBytes: 256 * 1024 });
    const { answer, sent } = await endlessUpload(port);
    expect(answer).toMatch(/^HTTP\/1\.1 413 .*\r\n\r\n\{"error":\{"code":"payload_too_large"\}\}$/s);
    expect(sent).toBeGreaterThan(256 * 1024);
  });

  it('closes as soon as the client closes its side', async () => {
    const port = await refusingServer({ maxMs: 60_000, maxBytes: Number.MAX_SAFE_INTEGER });
    const answer = await new Promise<string>((resolve) => {
      let text = '';
      const socket = net.connect(port, '127.0.0.1', () => {
        socket.write('POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\n\r\n');
        socket.write(Buffer.alloc(64 * 1024, 0x20));
      });
      socket.on('data', (data: Buffer) => {
        text += data.toString();
        if (text.endsWith('}}')) socket.end(); // read the answer, stop sending
      });
      socket.on('close', () => resolve(text));
    });
    expect(answer).toContain('payload_too_large');
  });

  it('keeps reading it only up to the time limit', async () => {
    const port = await refusingServer({ maxMs: 300, maxBytes: Number.MAX_SAFE_INTEGER });
    const { answer } = await endlessUpload(port);
    expect(answer).toContain('payload_too_large');
  });
});
