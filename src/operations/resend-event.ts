import { randomUUID } from 'node:crypto';
import { sendAttempt } from '../delivery/http-sender.js';
import { deliveryHeaders, identityHeaders, type DeliveryIdentity } from '../signing/delivery-headers.js';
import { RECEIVED_SIGNATURE_HEADERS } from '../signing/scheme.js';
import { HookrelayError } from '../errors.js';
import type { StoredEvent } from '../store/event-store.js';
import type { OperationsContext } from './context.js';
import type { ResendResultView } from './view-schemas.js';

const RESEND_TIMEOUT_MS = 10_000;
/** How a resend is signed: the headers received with the event, a new signature, or none. */
export type ResendSigning =
  | { mode: 'original' }
  | { mode: 'resign'; scheme: 'hmac-sha256-hex' | 'standard-webhooks'; secret: string }
  | { mode: 'none' };

export interface ResendRequest {
  url: string;
  signing: ResendSigning;
}

/** The signature headers the event arrived with: its source's configured header and the well-known ones. */
function originalSignatureHeaders(event: StoredEvent, ctx: OperationsContext): Record<string, string> {
  const configured = ctx.sources.get(event.source)?.signatureHeader;
  const names = new Set([...(configured ? [configured] : []), ...RECEIVED_SIGNATURE_HEADERS]);
  const headers: Record<string, string> = {};
  for (const name of names) {
    const value = event.headers[name];
    if (value !== undefined) headers[name] = value;
  }
  return headers;
}

/** Identity headers on every resend (its own delivery id); the signature as asked. */
function resendHeaders(event: StoredEvent, signing: ResendRequest['signing'], ctx: OperationsContext): Record<string, string> {
  const identity: DeliveryIdentity = { deliveryId: `rsnd_${randomUUID()}`, eventId: event.id, timestamp: new Date(ctx.now()) };
  switch (signing.mode) {
    case 'original':
      return { ...identityHeaders(identity), ...originalSignatureHeaders(event, ctx) };
    case 'none':
      return identityHeaders(identity);
    case 'resign':
      try {
        return deliveryHeaders({ ...identity, signing: { scheme: signing.scheme, secret: signing.secret }, body: event.body });
      } catch (err) {
        const message = (err as Error).message;
        throw new HookrelayError('validation_failed', `Cannot sign with this secret: ${message}`, { issues: [{ path: 'signing.secret', message, code: 'custom' }] });
      }
  }
}

/**
 * POST /events/:id/resend: the stored raw bytes, byte-exact, to any URL, once, through the SSRF-guarded
 * dispatcher. Nothing is stored; the answer is the attempt's outcome.
 */
export async function resendEvent(ctx: OperationsContext, eventId: number, request: ResendRequest): Promise<ResendResultView> {
  const event = await ctx.store.getEvent(eventId);
  if (!event) throw new HookrelayError('not_found', `No event ${eventId}.`);
  const headers = { 'content-type': event.headers['content-type'] ?? 'application/json', ...resendHeaders(event, request.signing, ctx) };
  const result = await sendAttempt({ url: request.url, headers, body: event.body, timeoutMs: RESEND_TIMEOUT_MS, dispatcher: await ctx.dispatcher() });
  // The origin only: full URLs (Slack, Zapier hooks) are secrets.
  ctx.logger.info({ eventId, destination: new URL(request.url).origin, mode: request.signing.mode, status: result.status ?? null, error: result.error?.code ?? null }, 'event resent');
  if (result.error?.code === 'destination_refused') {
    throw new HookrelayError('destination_refused', result.error.message, { url: request.url });
  }
  return { status: result.status ?? null, durationMs: Math.round(result.durationMs), responseExcerpt: result.responseExcerpt, error: result.error ?? null };
}
