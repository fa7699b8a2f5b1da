import { randomUUID } from 'node:crypto';
import { request } from 'undici';
import type { StreamedEventView } from '../operations/view-schemas.js';
import { deliveryHeaders } from '../signing/delivery-headers.js';

export type ResignScheme = 'hmac-sha256-hex' | 'standard-webhooks';

/** How forwarded events are signed: with the headers they arrived with, or afresh with the user's secret. */
export type ForwardSigning = { mode: 'original' } | { mode: 'resign'; scheme: ResignScheme | 'as-received'; secret: string };

export interface ForwardResult {
  status: number | null;
  durationMs: number;
  error: string | null;
}

const FORWARD_TIMEOUT_MS = 10_000;
/** Standard Webhooks receivers refuse a `webhook-timestamp` older than this (the library's default tolerance). */
export const STANDARD_WEBHOOKS_TOLERANCE_MS = 5 * 60_000;

/** Signature headers as received: the well-known ones and any other header whose name says signature. */
export function originalSignatureHeaders(headers: Record<string, string>): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (name === 'webhook-id' || name === 'webhook-timestamp' || name.includes('signature')) kept[name] = value;
  }
  return kept;
}

/** The scheme an event was signed with when it arrived, from its headers. */
export function receivedScheme(headers: Record<string, string>): ResignScheme {
  return headers['webhook-signature'] !== undefined ? 'standard-webhooks' : 'hmac-sha256-hex';
}

/** True when the event's original Standard Webhooks signature is too old for a verifier to accept now. */
export function originalSignatureExpired(headers: Record<string, string>, now: number): boolean {
  const timestamp = Number(headers['webhook-timestamp']);
  return Number.isFinite(timestamp) && now - timestamp * 1000 > STANDARD_WEBHOOKS_TOLERANCE_MS;
}

export function forwardHeaders(event: Required<Pick<StreamedEventView, 'headers'>>, body: Buffer, signing: ForwardSigning, now: Date): Record<string, string> {
  const contentType = event.headers['content-type'] ?? 'application/json';
  if (signing.mode === 'original') return { 'content-type': contentType, ...originalSignatureHeaders(event.headers) };
  const scheme = signing.scheme === 'as-received' ? receivedScheme(event.headers) : signing.scheme;
  return { 'content-type': contentType, ...deliveryHeaders({ signing: { scheme, secret: signing.secret }, deliveryId: `lstn_${randomUUID()}`, timestamp: now, body }) };
}

/** POSTs the exact stored bytes to the user's own endpoint (any address: this runs on their machine). */
export async function forwardEvent(target: string, body: Buffer, headers: Record<string, string>, signal?: AbortSignal): Promise<ForwardResult> {
  const started = performance.now();
  const elapsed = (): number => Math.round(performance.now() - started);
  try {
    const response = await request(target, { method: 'POST', body, headers, headersTimeout: FORWARD_TIMEOUT_MS, bodyTimeout: FORWARD_TIMEOUT_MS, signal });
    await response.body.dump();
    return { status: response.statusCode, durationMs: elapsed(), error: null };
  } catch (err) {
    if (signal?.aborted) throw err;
    const error = err as NodeJS.ErrnoException;
    return { status: null, durationMs: elapsed(), error: error.code ?? error.message };
  }
}
