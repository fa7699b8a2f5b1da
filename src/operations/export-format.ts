import { z } from 'zod';
import { amountOf } from '../ingest/event-columns.js';
import type { ImportedEvent, StoredEvent } from '../store/store.js';
import type { EventDetailView } from './view-schemas.js';

/**
 * One line of `events export` output: everything stored about an event except its local id. The body is
 * base64 so the exact bytes survive (JSON text would not keep whitespace, key order or invalid UTF-8).
 */
export const EXPORT_FORMAT = 'hookrelay.event.v1';

const isoTime = z.iso.datetime({ offset: true });

const RecordFieldsSchema = z.strictObject({
  format: z.literal(EXPORT_FORMAT),
  source: z.string().min(1),
  event: z.string().min(1),
  transferId: z.string().min(1),
  validation: z.enum(['valid', 'unrecognised', 'invalid']),
  checkoutId: z.string().nullable(),
  email: z.string().nullable(),
  walletAddress: z.string().nullable(),
  receivedAt: isoTime,
  lastReceivedAt: isoTime,
  receivedCount: z.int().positive(),
  headers: z.record(z.string(), z.string()),
  bodyBase64: z.base64(),
  /** The rule set that routed it on the exporting store (absent in exports older than rule sets). */
  ruleSetHash: z.string().nullable().optional(),
  /** An edited copy: `editedFrom` is an id of the exporting store. */
  edit: z
    .strictObject({ editedFrom: z.int().positive(), editedAt: isoTime, via: z.enum(['console', 'cli', 'api']), number: z.int().positive() })
    .nullable()
    .optional(),
});

/** Exports written before the store took the API's name carry `resultId`: still importable. */
function acceptDeprecatedNames(json: unknown): unknown {
  if (typeof json !== 'object' || json === null || !('resultId' in json) || 'transferId' in json) return json;
  const { resultId, ...rest } = json as Record<string, unknown>;
  return { ...rest, transferId: resultId };
}

export const ExportRecordSchema = z.preprocess(acceptDeprecatedNames, RecordFieldsSchema);
export type ExportRecord = z.infer<typeof ExportRecordSchema>;

/** What both sources of a record (local store, admin API detail) carry, under the record's names. */
type RecordFields = Pick<ExportRecord, 'source' | 'event' | 'transferId' | 'validation' | 'checkoutId' | 'email' | 'walletAddress' | 'receivedCount' | 'headers' | 'bodyBase64'> & {
  receivedAt: number | string;
  lastReceivedAt: number | string;
  ruleSetHash: string | null;
  edit: { editedFrom: number; editedAt: number | string; via: 'console' | 'cli' | 'api'; number: number } | null;
};

function toRecord(f: RecordFields): ExportRecord {
  return {
    format: EXPORT_FORMAT,
    source: f.source,
    event: f.event,
    transferId: f.transferId,
    validation: f.validation,
    checkoutId: f.checkoutId,
    email: f.email,
    walletAddress: f.walletAddress,
    receivedAt: new Date(f.receivedAt).toISOString(),
    lastReceivedAt: new Date(f.lastReceivedAt).toISOString(),
    receivedCount: f.receivedCount,
    headers: f.headers,
    bodyBase64: f.bodyBase64,
    ruleSetHash: f.ruleSetHash,
    edit: f.edit && { ...f.edit, editedAt: new Date(f.edit.editedAt).toISOString() },
  };
}

export function recordFromStored(e: StoredEvent): ExportRecord {
  return toRecord({ ...e, bodyBase64: e.body.toString('base64') });
}

/** From the admin API's event detail (remote export). */
export function recordFromDetail(e: EventDetailView): ExportRecord {
  return toRecord(e);
}

export class ImportLineError extends Error {}

/** Parses and checks one line; the body must be the envelope the key claims (a hand-edited file would not be). */
export function parseRecordLine(line: string): ImportedEvent {
  let json: unknown;
  try {
    json = JSON.parse(line);
  } catch {
    throw new ImportLineError('not valid JSON (a line cut off by an interrupted export?)');
  }
  const parsed = ExportRecordSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new ImportLineError(`${issue.path.join('.') || 'record'}: ${issue.message}`);
  }
  const record = parsed.data;
  const body = Buffer.from(record.bodyBase64, 'base64');
  let envelope: { event?: unknown; result?: { id?: unknown } & Record<string, unknown> };
  try {
    envelope = JSON.parse(body.toString('utf8')) as typeof envelope;
  } catch {
    throw new ImportLineError('bodyBase64 does not hold a JSON body');
  }
  // An edited copy keeps its original's key whatever the edit did to the body (it may even be meant invalid).
  if (!record.edit && (envelope.event !== record.event || envelope.result?.id !== record.transferId)) {
    throw new ImportLineError(`the body's event and result.id do not match "event" and "transferId"`);
  }
  return {
    source: record.source,
    event: record.event,
    transferId: record.transferId,
    validation: record.validation,
    checkoutId: record.checkoutId,
    email: record.email,
    walletAddress: record.walletAddress,
    // Not a field of the record: taken from the body, as ingest does, so exports of any version carry it
    // and a version that does not know the column still reads this one's exports.
    totalPriceUsd: typeof envelope.result === 'object' && envelope.result !== null ? amountOf(envelope.result) : null,
    receivedAt: Date.parse(record.receivedAt),
    lastReceivedAt: Date.parse(record.lastReceivedAt),
    receivedCount: record.receivedCount,
    headers: record.headers,
    body,
    ruleSetHash: record.ruleSetHash ?? null,
    edit: record.edit ? { ...record.edit, editedAt: Date.parse(record.edit.editedAt) } : null,
  };
}
