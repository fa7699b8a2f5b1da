import type { Signing } from '../signing/scheme.js';
import { signatureHeaders } from '../signing/sign.js';

/** Stable across retries of one delivery: receivers deduplicate on it. */
export const DELIVERY_ID_HEADER = 'X-Hookrelay-Delivery';

export interface DeliveryHeadersInput {
  deliveryId: string;
  signing: Signing;
  /** Time of this attempt. */
  timestamp: Date;
  /** Exactly the bytes that will be sent. */
  body: string | Uint8Array;
}

/** Headers that identify and sign one delivery attempt; `webhook-id` is the delivery id in every scheme. */
export function deliveryHeaders(input: DeliveryHeadersInput): Record<string, string> {
  return {
    [DELIVERY_ID_HEADER]: input.deliveryId,
    'webhook-id': input.deliveryId,
    ...signatureHeaders(input.signing, { id: input.deliveryId, timestamp: input.timestamp, body: input.body }),
  };
}
