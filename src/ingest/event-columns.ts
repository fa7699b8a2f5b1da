import type { NewEvent, Validation } from '../store/event-store.js';
import type { EventEnvelope } from './event-schemas.js';

const stringOrNull = (value: unknown): string | null => (typeof value === 'string' && value.length > 0 ? value : null);

/** `result.totalPriceUsd` when it is a finite number (JSON.parse turns 1e400 into Infinity), else null. */
export function amountOf(result: Record<string, unknown>): number | null {
  const value = result.totalPriceUsd;
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

/** The lookup columns stored beside the raw bytes: what operators filter on. */
export function eventColumns(
  envelope: EventEnvelope,
  validation: Validation,
): Pick<NewEvent, 'event' | 'transferId' | 'checkoutId' | 'email' | 'walletAddress' | 'totalPriceUsd' | 'validation'> {
  const result = envelope.result as Record<string, unknown>;
  return {
    event: envelope.event,
    transferId: envelope.result.id,
    checkoutId: stringOrNull(result.checkoutId),
    email: stringOrNull(result.email),
    walletAddress: stringOrNull(result.walletAddress),
    // Read from the body ingest has already parsed: no second parse on the acknowledging path.
    totalPriceUsd: amountOf(result),
    validation,
  };
}
