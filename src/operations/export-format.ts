import { z } from 'zod';
import { MAX_RECEIVED_COUNT, type StoredEvent } from '../store/event-store.js';
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
  receivedCount: z.int().positive().max(MAX_RECEIVED_COUNT),
  headers: z.record(z.string(), z.string()),
  bodyBase64: z.base64(),
  /** The rule set that routed it on the exporting store (absent in exports older than rule sets). */
  ruleSetHash: z.string().nullable().optional(),
  /** An edited copy: `editedFrom` is an id of the exporting store. */
  edit: z
    .strictObject({ editedFrom: z.int().positive(), editedAt: isoTime, via: z.enum(['console', 'cli', 'api']), number: z.int().positive().max(MAX_RECEIVED_COUNT) })
    .nullable()
    .optional(),
  /** What a check found wrong with the body (absent in exports older than quarantine). */
  issues: z
    .strictObject({
      from: z.enum(['schema', 'contract']),
      contract: z.string().optional(),
      issues: z.array(z.strictObject({ path: z.string(), message: z.string(), code: z.string() })).max(100),
    })
    .nullable()
    .optional(),
  /** `held` or `released`: an event kept in quarantine keeps its state on import. */
  quarantine: z.enum(['held', 'released']).nullable().optional(),
  release: z.strictObject({ releasedAt: isoTime, releasedBy: z.string().max(200), forced: z.boolean() }).nullable().optional(),
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
  issues: ExportRecord['issues'];
  quarantine: ExportRecord['quarantine'];
  release: { releasedAt: number | string; releasedBy: string; forced: boolean } | null;
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
    issues: f.issues ?? null,
    quarantine: f.quarantine ?? null,
    release: f.release && { ...f.release, releasedAt: new Date(f.release.releasedAt).toISOString() },
  };
}

export function recordFromStored(e: StoredEvent): ExportRecord {
  return toRecord({ ...e, bodyBase64: e.body.toString('base64') });
}

/** From the admin API's event detail (remote export). */
export function recordFromDetail(e: EventDetailView): ExportRecord {
  return toRecord(e);
}
