import { createHash } from 'node:crypto';
import type { NewEvent } from '../store/event-store.js';
import { amountOf } from './event-columns.js';

/** The event name kept for a quarantined body that names none (or not as a string of 1 to 200 characters). */
export const NO_EVENT_NAME = '(none)';
/** The transfer id column of a body kept in quarantine after a 422: its digest, so a repeat is stored once. */
export const BODY_DIGEST_PREFIX = 'sha256:';

const text = (value: unknown): string | null => (typeof value === 'string' && value.length > 0 && value.length <= 200 ? value : null);

/**
 * The lookup columns of an authentic body that fails the event schema. It is kept under the key
 * (source, event name, `sha256:` + hex digest of the exact bytes), not under its `result.id`: that id may be
 * missing or malformed, a repeat of the same bytes must be one row, and a corrected body the sender sends later
 * under the same transfer id must still be stored and routed as a new event.
 */
export function quarantinedColumns(parsed: unknown, body: Buffer): Pick<NewEvent, 'event' | 'transferId' | 'checkoutId' | 'email' | 'walletAddress' | 'totalPriceUsd' | 'validation'> {
  const envelope = typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
  const result = typeof envelope.result === 'object' && envelope.result !== null && !Array.isArray(envelope.result) ? (envelope.result as Record<string, unknown>) : {};
  return {
    event: text(envelope.event) ?? NO_EVENT_NAME,
    transferId: BODY_DIGEST_PREFIX + createHash('sha256').update(body).digest('hex'),
    checkoutId: text(result.checkoutId),
    email: text(result.email),
    walletAddress: text(result.walletAddress),
    totalPriceUsd: amountOf(result),
    validation: 'invalid',
  };
}
