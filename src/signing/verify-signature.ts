import { timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { Webhook } from 'standardwebhooks';
import { HookrelayError } from '../errors.js';
import { verifyHmacSha256Hex } from './hmac-sha256-hex.js';
import { STANDARD_WEBHOOK_HEADERS, type SignatureScheme } from './scheme.js';

/** What verifying needs of a source (its config): scheme, secrets (several while rotating), header, tolerance. */
export interface VerifyingSource {
  scheme: SignatureScheme;
  secrets: readonly string[];
  /** hmac-sha256-hex: the header carrying the signature, lower case. */
  signatureHeader: string;
  /** standard-webhooks: how far webhook-timestamp may be from now. */
  toleranceSeconds: number;
}

/** A header sent twice arrives as an array (or comma-joined); either way it is not one signature. */
function singleHeader(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}

function verifyHmacSource(source: VerifyingSource, headers: IncomingHttpHeaders, body: Buffer): void {
  const header = singleHeader(headers, source.signatureHeader);
  if (header === undefined || header.trim() === '') {
    throw new HookrelayError('missing_signature', `Missing ${source.signatureHeader} header.`, { header: source.signatureHeader });
  }
  if (!verifyHmacSha256Hex(source.secrets, body, header)) {
    throw new HookrelayError('invalid_signature', `The ${source.signatureHeader} header does not match the body.`, { header: source.signatureHeader });
  }
}

/** Standard Webhooks: HMAC over `id.timestamp.body`, several space-separated `v1,<base64>` entries allowed. */
function verifyStandardWebhooksSource(source: VerifyingSource, headers: IncomingHttpHeaders, body: Buffer, nowMs: number): void {
  const missing = STANDARD_WEBHOOK_HEADERS.filter((name) => !singleHeader(headers, name)?.trim());
  if (missing.length > 0) {
    throw new HookrelayError('missing_signature', `Missing ${missing.join(', ')} header(s).`, { headers: missing });
  }
  const timestamp = Number(singleHeader(headers, 'webhook-timestamp'));
  if (!Number.isInteger(timestamp) || Math.abs(nowMs / 1000 - timestamp) > source.toleranceSeconds) {
    throw new HookrelayError('invalid_signature', `webhook-timestamp is not within ${source.toleranceSeconds}s of now.`, { header: 'webhook-timestamp' });
  }
  const id = singleHeader(headers, 'webhook-id')!;
  const given = singleHeader(headers, 'webhook-signature')!
    .split(' ')
    .filter((entry) => entry.startsWith('v1,'))
    .map((entry) => Buffer.from(entry.slice(3)));
  // The package computes the signature; the timestamp tolerance is ours (configurable, injectable clock), so
  // its verify(), which reads the wall clock with a fixed tolerance, is not used. Every secret is tried.
  let matched = false;
  for (const secret of source.secrets) {
    const expected = Buffer.from(new Webhook(secret).sign(id, new Date(timestamp * 1000), body).slice(3));
    for (const candidate of given) {
      if (candidate.length === expected.length && timingSafeEqual(candidate, expected)) matched = true;
    }
  }
  if (!matched) {
    throw new HookrelayError('invalid_signature', 'No webhook-signature entry matches the body.', { header: 'webhook-signature' });
  }
}

/** Throws missing_signature or invalid_signature unless the raw body is signed for this source. */
export function verifySignature(source: VerifyingSource, headers: IncomingHttpHeaders, body: Buffer, nowMs = Date.now()): void {
  switch (source.scheme) {
    case 'hmac-sha256-hex':
      return verifyHmacSource(source, headers, body);
    case 'standard-webhooks':
      return verifyStandardWebhooksSource(source, headers, body, nowMs);
    case 'none':
      return;
  }
}
