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

/** Headers that say which delivery, event and rule a request is, and when it was sent. */
export function identityHeaders(identity: DeliveryIdentity): Record<string, string> {
  return {
    [DELIVERY_ID_HEADER]: identity.deliveryId,
    ...(identity.eventId !== undefined && { [EVENT_ID_HEADER]: String(identity.eventId) }),
    ...(identity.ruleId !== undefined && { [RULE_ID_HEADER]: identity.ruleId }),
    [TIMESTAMP_HEADER]: String(Math.floor(identity.timestamp.getTime() / 1000)),
  };
}

/** Headers that identify and sign one delivery attempt; `webhook-id` is the delivery id in every scheme. */
export function deliveryHeaders(input: DeliveryHeadersInput): Record<string, string> {
  return {
    ...identityHeaders(input),
    'webhook-id': input.deliveryId,
    ...signatureHeaders(input.signing, { id: input.deliveryId, timestamp: input.timestamp, body: input.body }),
  };
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
