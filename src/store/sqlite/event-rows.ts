import type { EditVia, EventEdit, EventSummary, StoredEvent, Validation } from '../event-store.js';
import type { NewEventRead } from '../new-event-store.js';
import type { EventToLearn } from '../schema-store.js';
import { quarantineOf, type QuarantineColumns } from '../quarantine-columns.js';

/** An `events` row as SQLite returns it; `headers`/`body` only when selected, `body_bytes` when computed. */
export interface EventRow extends QuarantineColumns {
  id: number;
  source: string;
  event: string;
  transfer_id: string;
  checkout_id: string | null;
  email: string | null;
  wallet_address: string | null;
  total_price_usd: number | null;
  validation: Validation;
  received_at: number;
  last_received_at: number;
  received_count: number;
  imported_at?: number | null;
  rule_set_hash?: string | null;
  edit_number: number;
  edited_from: number | null;
  edited_at: number | null;
  edited_via: EditVia | null;
  headers?: string;
  body?: Buffer;
  body_bytes?: number;
}

/** The summary columns of a list page, with the body's size instead of the body. */
export const SUMMARY_COLUMNS = `e.id, e.source, e.event, e.transfer_id, e.checkout_id, e.email, e.wallet_address, e.total_price_usd, e.validation,
  e.received_at, e.last_received_at, e.received_count, e.edit_number, e.edited_from, e.edited_at, e.edited_via,
  e.issues, e.quarantine, e.released_at, e.released_by, e.release_forced, length(e.body) AS body_bytes`;

/** What a new-events read selects: the summary with the import time, plus headers and body only `withBodies`. */
export function newEventColumns(withBodies: boolean): string {
  return withBodies ? 'e.*' : `${SUMMARY_COLUMNS}, e.imported_at`;
}

/** What schema learning reads of a new event (`toEventToLearn`). */
export const LEARN_COLUMNS = 'e.id, e.source, e.event, e.received_at, e.edited_at, e.body';

export function toEventToLearn(row: EventRow): EventToLearn {
  return { id: row.id, source: row.source, event: row.event, receivedAt: row.received_at, edited: row.edited_at !== null, body: row.body! };
}

/** A row selected with `newEventColumns(withBodies)` as the store hands it to event streams. */
export function toNewEvent<B extends boolean>(row: EventRow, withBodies: B): NewEventRead<B> {
  const summary = { ...toEventSummary(row), importedAt: row.imported_at ?? null };
  return (withBodies ? { ...summary, headers: JSON.parse(row.headers!) as Record<string, string>, body: row.body! } : summary) as NewEventRead<B>;
}

function editOf(row: EventRow): EventEdit | null {
  if (row.edited_at === null || row.edited_at === undefined) return null;
  return { editedFrom: row.edited_from!, editedAt: row.edited_at, via: row.edited_via!, number: row.edit_number };
}

export function toEventSummary(row: EventRow): EventSummary {
  return {
    id: row.id,
    source: row.source,
    event: row.event,
    transferId: row.transfer_id,
    checkoutId: row.checkout_id,
    email: row.email,
    walletAddress: row.wallet_address,
    totalPriceUsd: row.total_price_usd,
    validation: row.validation,
    receivedAt: row.received_at,
    lastReceivedAt: row.last_received_at,
    receivedCount: row.received_count,
    edit: editOf(row),
    ...quarantineOf(row),
    bodyBytes: row.body_bytes ?? row.body?.length ?? 0,
  };
}

/** A whole event; the row must include `headers` and `body`. */
export function toStoredEvent(row: EventRow): StoredEvent {
  const { bodyBytes: _bodyBytes, ...summary } = toEventSummary(row);
  return { ...summary, importedAt: row.imported_at ?? null, ruleSetHash: row.rule_set_hash ?? null, headers: JSON.parse(row.headers!) as Record<string, string>, body: row.body! };
}
