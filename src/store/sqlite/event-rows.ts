import type { EventSummary, StoredEvent } from '../store.js';

/** An `events` row as SQLite returns it; `headers`/`body` only when selected, `body_bytes` when computed. */
export interface EventRow {
  id: number;
  source: string;
  event: string;
  transfer_id: string;
  checkout_id: string | null;
  email: string | null;
  wallet_address: string | null;
  validation: 'valid' | 'unrecognised';
  received_at: number;
  last_received_at: number;
  received_count: number;
  imported_at?: number | null;
  headers?: string;
  body?: Buffer;
  body_bytes?: number;
}

/** The summary columns of a list page, with the body's size instead of the body. */
export const SUMMARY_COLUMNS = `e.id, e.source, e.event, e.transfer_id, e.checkout_id, e.email, e.wallet_address, e.validation,
  e.received_at, e.last_received_at, e.received_count, length(e.body) AS body_bytes`;

export function toEventSummary(row: EventRow): EventSummary {
  return {
    id: row.id,
    source: row.source,
    event: row.event,
    transferId: row.transfer_id,
    checkoutId: row.checkout_id,
    email: row.email,
    walletAddress: row.wallet_address,
    validation: row.validation,
    receivedAt: row.received_at,
    lastReceivedAt: row.last_received_at,
    receivedCount: row.received_count,
    bodyBytes: row.body_bytes ?? row.body?.length ?? 0,
  };
}

/** A whole event; the row must include `headers` and `body`. */
export function toStoredEvent(row: EventRow): StoredEvent {
  const { bodyBytes: _bodyBytes, ...summary } = toEventSummary(row);
  return { ...summary, importedAt: row.imported_at ?? null, headers: JSON.parse(row.headers!) as Record<string, string>, body: row.body! };
}
