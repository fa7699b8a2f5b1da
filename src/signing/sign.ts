import { Webhook } from 'standardwebhooks';
import { signHmacSha256Hex } from './hmac-sha256-hex.js';

export type OutgoingSigning =
  | { scheme: 'none' }
  | { scheme: 'standard-webhooks'; secret: string }
  | { scheme: 'hmac-sha256-hex'; secret: string; header?: string };

/** Same header the checkout service uses, so a receiver written for it works unchanged. */
export const DEFAULT_HMAC_HEADER = 'X-Service-Signature';
/** Stable across retries and replays of one delivery: receivers deduplicate on it. */
export const DELIVERY_ID_HEADER = 'X-Hookrelay-Delivery';

export interface SignOutgoingInput {
  signing: OutgoingSigning;
  deliveryId: string;
  /** Time of this attempt; standard-webhooks signs it, so each retry carries a fresh signature. */
  timestamp: Date;
  /** Exactly the bytes that will be sent. */
  body: string | Uint8Array;
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

/** Headers that identify and sign one delivery attempt. */
export function signOutgoing(input: SignOutgoingInput): Record<string, string> {
  const headers: Record<string, string> = {
    [DELIVERY_ID_HEADER]: input.deliveryId,
    'webhook-id': input.deliveryId,
  };
  const { signing } = input;
  switch (signing.scheme) {
    case 'none':
      return headers;
    case 'hmac-sha256-hex':
      headers[signing.header ?? DEFAULT_HMAC_HEADER] = signHmacSha256Hex(signing.secret, input.body);
      return headers;
    case 'standard-webhooks':
      headers['webhook-timestamp'] = String(Math.floor(input.timestamp.getTime() / 1000));
      headers['webhook-signature'] = standardWebhook(signing.secret).sign(input.deliveryId, input.timestamp, bodyText(input.body));
      return headers;
  }
}
