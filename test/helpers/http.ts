import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { request } from 'undici';
import type { SignatureScheme, Signing } from '../../src/signing/scheme.js';
import { newMessageId, signatureHeaders } from '../../src/signing/sign.js';

export interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json: any;
}

export async function send(url: string, options: { method?: string; headers?: Record<string, string>; body?: string | Buffer } = {}): Promise<Reply> {
  const response = await request(url, { method: (options.method ?? 'GET') as 'GET', headers: options.headers, body: options.body });
  const text = await response.body.text();
  let json: unknown = undefined;
  try {
    json = JSON.parse(text);
  } catch {
    // not JSON: callers that expect JSON assert on `json` and fail there
  }
  return { status: response.statusCode, headers: response.headers, text, json };
}

function signingOf(scheme: SignatureScheme, secret: string): Signing {
  return scheme === 'none' ? { scheme } : { scheme, secret };
}

/** POSTs `body` (object → JSON) signed for a receiver source with `secret`. */
export async function postSigned(
  url: string,
  body: unknown,
  secret: string,
  options: { scheme?: SignatureScheme; headers?: Record<string, string> } = {},
): Promise<Reply> {
  const raw = Buffer.isBuffer(body) ? body : Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
  const headers = { 'content-type': 'application/json', ...signatureHeaders(signingOf(options.scheme ?? 'hmac-sha256-hex', secret), { id: newMessageId(), timestamp: new Date(), body: raw }), ...options.headers };
  return send(url, { method: 'POST', headers, body: raw });
}

/** A loopback port that was free a moment ago, for a process whose settings need a port before it starts. */
export async function freeLoopbackPort(): Promise<number> {
  const server = createNetServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
