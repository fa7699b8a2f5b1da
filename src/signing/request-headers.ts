import { randomUUID } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import type { SignatureScheme } from '../config.js';
import { signHmacSha256Hex } from './hmac-sha256-hex.js';

/** The headers a sender adds so that a receiver configured with `scheme` and `secret` accepts `body`. */
export function signatureHeaders(scheme: SignatureScheme, secret: string, body: Buffer, now = new Date()): Record<string, string> {
  switch (scheme) {
    case 'hmac-sha256-hex':
      return { 'X-Service-Signature': signHmacSha256Hex(secret, body) };
    case 'standard-webhooks': {
      const id = `msg_${randomUUID()}`;
      return {
        'webhook-id': id,
        'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
        'webhook-signature': new Webhook(secret).sign(id, now, body),
      };
    }
    case 'none':
      return {};
  }
}
