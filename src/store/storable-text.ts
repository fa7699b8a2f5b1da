import type { EventBody } from './event-store.js';
import type { EventRow } from './sqlite/event-rows.js';

/** The first character of an escaped value. A value that starts with it is always escaped, so every stored text has one reading. */
const ESCAPE = '\u0001';
/** What PostgreSQL text cannot hold as it is: a lone surrogate (sent as U+FFFD, merging "\ud800" with "\ufffd") and NUL. */
const UNSTORABLE = /[\ud800-\udfff\u0000]/u;

/**
 * A string from an event body (event name, transfer id, the other lookup columns, an order key) as text
 * that PostgreSQL can hold and that tells every two strings apart, the same keys as SQLite keeps
 * (sqlite/key-text.ts). Nearly every value is stored as it is; one PostgreSQL cannot hold, or one that
 * starts with ESCAPE, is stored as ESCAPE and its JSON string form, which has neither lone surrogates nor
 * NUL. Lookups compare the same form.
 */
export function eventText(value: string): string;
export function eventText(value: string | null): string | null;
export function eventText(value: string | null): string | null {
  if (value === null || (!UNSTORABLE.test(value) && !value.startsWith(ESCAPE))) return value;
  return ESCAPE + JSON.stringify(value);
}

/** The string `eventText` stored. */
export function fromEventText(text: string): string;
export function fromEventText(text: string | null): string | null;
export function fromEventText(text: string | null): string | null {
  return text !== null && text.startsWith(ESCAPE) ? (JSON.parse(text.slice(1)) as string) : text;
}

/** An `events` row with its text columns read back (in place: rows are fresh from the driver). */
export function readEventRow<R extends Partial<Pick<EventRow, 'source' | 'event' | 'transfer_id' | 'checkout_id' | 'email' | 'wallet_address'>>>(row: R): R {
  if (row.source !== undefined) row.source = fromEventText(row.source);
  if (row.event !== undefined) row.event = fromEventText(row.event);
  if (row.transfer_id !== undefined) row.transfer_id = fromEventText(row.transfer_id);
  if (row.checkout_id !== undefined) row.checkout_id = fromEventText(row.checkout_id);
  if (row.email !== undefined) row.email = fromEventText(row.email);
  if (row.wallet_address !== undefined) row.wallet_address = fromEventText(row.wallet_address);
  return row;
}

/** An event body read with its source and event name. */
export function readEventBody(row: EventBody): EventBody {
  return { ...row, source: fromEventText(row.source), event: fromEventText(row.event) };
}
