import { type Agent, request } from 'undici';
import { signHmacSha256Hex } from '../../../src/signing/hmac-sha256-hex.js';

/**
 * POSTs raw bytes, signed, to a server's checkout webhook and reads the whole answer. Throws when the
 * connection fails (a server killed under the request): the caller decides what that means.
 */
export async function postWebhook(url: string, raw: Buffer, secret: string, agent: Agent): Promise<{ status: number; text: string }> {
  const response = await request(`${url}/webhooks/checkout`, {
    method: 'POST',
    dispatcher: agent,
    headers: { 'content-type': 'application/json', 'x-service-signature': signHmacSha256Hex(secret, raw) },
    body: raw,
    headersTimeout: 10_000,
    bodyTimeout: 10_000,
  });
  return { status: response.statusCode, text: await response.body.text() };
}
