import { quarantinedColumns } from '../ingest/quarantine-columns.js';
import { HookrelayError } from '../errors.js';
import { amountOf, eventColumns } from '../ingest/event-columns.js';
import { nestsDeeperThan } from '../ingest/nesting.js';
import { parseJsonBody } from '../ingest/parse-json.js';
import { withoutCredentials } from '../ingest/stored-headers.js';
import { validateEvent } from '../ingest/validate-event.js';
import type { ImportedEvent } from '../store/event-archive.js';
import { ExportRecordSchema, type ExportRecord } from './export-format.js';

/**
 * What an import holds a line to. An export file is untrusted input (it may have been edited, or written by
 * anyone): a line gets the checks a webhook gets, except the signature, which cannot be checked again (the
 * secrets that signed it may have been rotated since).
 */
export interface ImportLimits {
  /** The largest body, as for a webhook (`maxBody`). */
  maxBody: number;
  /** Levels of nesting a body may have, as for a webhook (`maxDepth`). */
  maxDepth: number;
}

/** An import into this instance: its limits, and its sources (events of others are imported and reported). */
export interface ImportPolicy extends ImportLimits {
  sources: ReadonlySet<string>;
}

export class ImportLineError extends Error {}

/** The longest line an import reads: a body of `maxBody` in base64 with room for its headers and fields. */
export function maxImportLineBytes(limits: ImportLimits): number {
  return limits.maxBody * 2 + 256 * 1024;
}

function refused(err: unknown, what: string): ImportLineError {
  if (!(err instanceof HookrelayError)) throw err;
  const issues = (err.details as { issues?: { path: string; message: string }[] } | null)?.issues;
  const first = issues?.slice(0, 3).map((i) => `${i.path}: ${i.message}`).join('; ');
  return new ImportLineError(`${what} ${err.message}${first ? ` (${first}${issues!.length > 3 ? '; …' : ''})` : ''}`);
}

/**
 * Parses and checks one line. Headers are kept as ingest keeps them (credentials never). A received event's
 * body must be one ingest accepts, under the key the line claims; its validation and lookup columns are
 * worked out from the body again. An edited copy keeps its key, validation and columns (an operator may
 * have stored it invalid on purpose) and only its body's size is checked.
 */
export function parseRecordLine(line: string, limits: ImportLimits): ImportedEvent {
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
  if (body.length > limits.maxBody) throw new ImportLineError(`the body has ${body.length} bytes, more than maxBody (${limits.maxBody})`);
  if (nestsDeeperThan(body, limits.maxDepth)) throw new ImportLineError(`the body nests objects and arrays more than maxDepth (${limits.maxDepth}) levels deep`);
  const event = {
    ...columnsOf(record, body),
    source: record.source,
    receivedAt: Date.parse(record.receivedAt),
    lastReceivedAt: Date.parse(record.lastReceivedAt),
    receivedCount: record.receivedCount,
    headers: withoutCredentials(record.headers),
    body,
    ruleSetHash: record.ruleSetHash ?? null,
    edit: record.edit ? { ...record.edit, editedAt: Date.parse(record.edit.editedAt) } : null,
    issues: record.issues ?? null,
    quarantine: record.quarantine ?? null,
    release: record.release ? { ...record.release, releasedAt: Date.parse(record.release.releasedAt) } : null,
  };
  return event;
}

type Columns = Pick<ImportedEvent, 'event' | 'transferId' | 'checkoutId' | 'email' | 'walletAddress' | 'totalPriceUsd' | 'validation'>;

/** The amount is not a field of the record: it is always taken from the body, as ingest does. */
function amountInBody(body: Buffer): number | null {
  try {
    const result = (JSON.parse(body.toString('utf8')) as { result?: unknown }).result;
    return typeof result === 'object' && result !== null ? amountOf(result as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

function columnsOf(record: ExportRecord, body: Buffer): Columns {
  if (record.edit) {
    const { event, transferId, checkoutId, email, walletAddress, validation } = record;
    return { event, transferId, checkoutId, email, walletAddress, totalPriceUsd: amountInBody(body), validation };
  }
  let parsed: unknown;
  try {
    parsed = parseJsonBody(body);
  } catch (err) {
    throw refused(err, 'bodyBase64 does not hold a JSON body:');
  }
  // A body kept in quarantine after a 422 is keyed by its digest (ingest/quarantine-columns.ts), as ingest keyed it.
  if (record.issues?.from === 'schema') {
    const columns = quarantinedColumns(parsed, body);
    if (columns.event !== record.event || columns.transferId !== record.transferId) {
      throw new ImportLineError(`the body's event and digest do not match "event" and "transferId"`);
    }
    return columns;
  }
  let validated;
  try {
    validated = validateEvent(parsed);
  } catch (err) {
    throw refused(err, 'the body is refused as a webhook would be:');
  }
  const columns = eventColumns(validated.envelope, validated.validation);
  if (columns.event !== record.event || columns.transferId !== record.transferId) {
    throw new ImportLineError(`the body's event and result.id do not match "event" and "transferId"`);
  }
  return columns;
}
