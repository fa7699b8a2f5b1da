/** The signature schemes hookrelay verifies (ingest) and signs with (delivery, resend, CLI, mock). */
export const SIGNATURE_SCHEMES = ['hmac-sha256-hex', 'standard-webhooks', 'none'] as const;
export type SignatureScheme = (typeof SIGNATURE_SCHEMES)[number];

/** A scheme with what signing needs: a rule's `sign`, a resend's re-signing, the CLI's flags. */
export type Signing =
  | { scheme: 'none' }
  | { scheme: 'standard-webhooks'; secret: string }
  | { scheme: 'hmac-sha256-hex'; secret: string; header?: string };

/** The checkout service's header: hex HMAC-SHA256 of the raw body. hmac-sha256-hex uses it unless told otherwise. */
export const SERVICE_SIGNATURE_HEADER = 'X-Service-Signature';

/** Standard Webhooks: the message id, its unix time in seconds, and the signatures over both and the body. */
export const STANDARD_WEBHOOK_HEADERS = ['webhook-id', 'webhook-timestamp', 'webhook-signature'] as const;

/** Every header the signature of a received webhook can travel in, lower case (as stored with the event). */
export const RECEIVED_SIGNATURE_HEADERS: readonly string[] = [SERVICE_SIGNATURE_HEADER.toLowerCase(), ...STANDARD_WEBHOOK_HEADERS];
