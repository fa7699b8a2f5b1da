import type { Signing } from './scheme.js';
import { signatureHeaders } from './sign.js';

/** Stable across retries of one delivery: receivers deduplicate on it. */
export const DELIVERY_ID_HEADER = 'X-Hookrelay-Delivery';
/** The stored event's id: the same for every delivery, replay and resend of one event. */
export const EVENT_ID_HEADER = 'X-Hookrelay-Event-Id';
/** The rule the delivery was planned for. */
export const RULE_ID_HEADER = 'X-Hookrelay-Rule';
/** When this attempt was sent, unix seconds (the same value Standard Webhooks signs as webhook-timestamp). */
export const TIMESTAMP_HEADER = 'X-Hookrelay-Timestamp';

export interface DeliveryIdentity {
  deliveryId: string;
  /** Absent where no stored event is involved (a `rules test` of a file). */
  eventId?: number;
  /** Absent for a resend, which no rule planned. */
  ruleId?: string;
  /** Time of this attempt. */
  timestamp: Date;
}

export interface DeliveryHeadersInput extends DeliveryIdentity {
  signing: Signing;
  /** Exactly the bytes that will be sent. */
  body: string | Uint8Array;
}

/**
 * Headers that say which delivery, event and rule a request is, and when it was sent, written into
 * `headers` (a new object by default): a worker builds one header object per attempt, not one per part.
 */
export function identityHeaders(identity: DeliveryIdentity, headers: Record<string, string> = {}): Record<string, string> {
  headers[DELIVERY_ID_HEADER] = identity.deliveryId;
  if (identity.eventId !== undefined) headers[EVENT_ID_HEADER] = String(identity.eventId);
  if (identity.ruleId !== undefined) headers[RULE_ID_HEADER] = identity.ruleId;
  headers[TIMESTAMP_HEADER] = String(Math.floor(identity.timestamp.getTime() / 1000));
  return headers;
}

/** Headers that identify and sign one delivery attempt, written into `headers`; `webhook-id` is the delivery id in every scheme. */
export function deliveryHeaders(input: DeliveryHeadersInput, headers: Record<string, string> = {}): Record<string, string> {
  identityHeaders(input, headers);
  headers['webhook-id'] = input.deliveryId;
  return Object.assign(headers, signatureHeaders(input.signing, { id: input.deliveryId, timestamp: input.timestamp, body: input.body }));
}

/** The `names` (lower case) of the headers received with the event, those it has. */
export function forwardedHeaders(received: Readonly<Record<string, string>>, names: readonly string[]): Record<string, string> {
  const picked: Record<string, string> = {};
  for (const name of names) {
    const value = received[name];
    if (value !== undefined) picked[name] = value;
  }
  return picked;
}
