import { randomUUID } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { signHmacSha256Hex } from './hmac-sha256-hex.js';
import { SERVICE_SIGNATURE_HEADER, type Signing } from './scheme.js';

export interface SignedMessage {
  /** Standard Webhooks signs it as `webhook-id`: a delivery id, so a receiver can deduplicate on it. */
  id: string;
  /** Standard Webhooks signs it, so each attempt of one delivery carries a fresh signature. */
  timestamp: Date;
  /** Exactly the bytes that will be sent. */
  body: string | Uint8Array;
}

/** An id for a message that has none of its own (a CLI send). */
export function newMessageId(): string {
  return `msg_${randomUUID()}`;
}

function bodyText(body: string | Uint8Array): string {
  // standard-webhooks signs text; bytes that are not UTF-8 would be altered silently, so refuse them.
  return typeof body === 'string' ? body : new TextDecoder('utf-8', { fatal: true }).decode(body);
}

function standardWebhook(secret: string): Webhook {
  try {
    return new Webhook(secret);
  } catch (error) {
    throw new Error('standard-webhooks secret must be base64, optionally prefixed whsec_', { cause: error });
  }
}

/** The headers that sign `message` so that a receiver configured with the same scheme and secret accepts it. */
export function signatureHeaders(signing: Signing, message: SignedMessage): Record<string, string> {
  switch (signing.scheme) {
    case 'none':
      return {};
    case 'hmac-sha256-hex':
      return { [signing.header ?? SERVICE_SIGNATURE_HEADER]: signHmacSha256Hex(signing.secret, message.body) };
    case 'standard-webhooks':
      return {
        'webhook-id': message.id,
        'webhook-timestamp': String(Math.floor(message.timestamp.getTime() / 1000)),
        'webhook-signature': standardWebhook(signing.secret).sign(message.id, message.timestamp, bodyText(message.body)),
      };
  }
}
