import { afterAll, describe, expect, it } from 'vitest';
import { EXPORT_FORMAT, recordFromStored } from '../../../src/operations/export-format.js';
import { ImportLineError, parseRecordLine as parseWithLimits } from '../../../src/operations/import-record.js';
import { quarantinedColumns } from '../../../src/ingest/quarantine-columns.js';
import { sampleTransferSucceeded } from '../../../src/samples/transfer-succeeded.js';
import { SqliteStore } from '../../../src/store/sqlite/sqlite-store.js';
import { makeTempDir, removeTempDirs } from '../../helpers/temp-dir.js';

const parseRecordLine = (line: string) => parseWithLimits(line, { maxBody: 1024 * 1024, maxDepth: 64 });

afterAll(() => removeTempDirs());

const sample = sampleTransferSucceeded();
const ID = sample.result.id;
const body = Buffer.from(JSON.stringify(sample));
const record = {
  format: EXPORT_FORMAT,
  source: 'checkout',
  event: 'transfer:succeeded',
  validation: 'valid',
  checkoutId: null,
  email: null,
  walletAddress: null,
  receivedAt: '2026-01-01T00:00:00.000Z',
  lastReceivedAt: '2026-01-01T00:00:00.000Z',
  receivedCount: 1,
  headers: {},
  bodyBase64: body.toString('base64'),
};

describe('export records', () => {
  it('reads the transfer id', () => {
    const event = parseRecordLine(JSON.stringify({ ...record, transferId: ID }));
    expect(event.transferId).toBe(ID);
    expect(event.body.equals(body)).toBe(true);
  });

  it('still imports exports that call it resultId', () => {
    expect(parseRecordLine(JSON.stringify({ ...record, resultId: ID })).transferId).toBe(ID);
  });

  it('takes the amount from the body (no field of the record), as ingest does', () => {
    const other = { ...record, event: 'x:paid', validation: 'unrecognised', transferId: 'tr_1' };
    const paid = Buffer.from(JSON.stringify({ event: 'x:paid', result: { id: 'tr_1', totalPriceUsd: 104.37 } }));
    const unpaid = Buffer.from(JSON.stringify({ event: 'x:paid', result: { id: 'tr_1' } }));
    expect(parseRecordLine(JSON.stringify({ ...other, bodyBase64: paid.toString('base64') })).totalPriceUsd).toBe(104.37);
    expect(parseRecordLine(JSON.stringify({ ...other, bodyBase64: unpaid.toString('base64') })).totalPriceUsd).toBeNull();
    expect(parseRecordLine(JSON.stringify({ ...record, transferId: ID })).totalPriceUsd).toBe(sample.result.totalPriceUsd);
    expect(Object.keys(recordFromStored({ ...parseRecordLine(JSON.stringify({ ...record, transferId: ID })), id: 1, importedAt: null, ruleSetHash: null, edit: null, totalPriceUsd: 5, quarantine: null, issues: null, release: null }))).not.toContain('totalPriceUsd');
  });

  it('keeps a quarantined body, keyed by its digest, with its state, issues and release', () => {
    const drifted = Buffer.from(JSON.stringify({ ...sample, result: { ...sample.result, totalPriceUsd: '1' } }));
    const columns = quarantinedColumns(JSON.parse(drifted.toString()), drifted);
    const issues = { from: 'schema' as const, issues: [{ path: 'result.totalPriceUsd', message: 'expected number', code: 'invalid_type' }] };
    const stored = {
      ...columns, id: 3, source: 'checkout', receivedAt: 1_000, lastReceivedAt: 1_000, receivedCount: 1, headers: {}, body: drifted, importedAt: null,
      ruleSetHash: null, edit: null, totalPriceUsd: null, quarantine: 'released' as const, issues, release: { releasedAt: 2_000, releasedBy: 'ops', forced: true },
    };
    const line = JSON.stringify(recordFromStored(stored));
    const back = parseRecordLine(line);
    expect(back).toMatchObject({ transferId: columns.transferId, validation: 'invalid', quarantine: 'released', issues, release: stored.release });
    expect(() => parseRecordLine(line.replace(columns.transferId, 'sha256:00'))).toThrow(ImportLineError);
  });

  it('refuses a record whose key does not match its body', () => {
    expect(() => parseRecordLine(JSON.stringify({ ...record, transferId: 'tr_2' }))).toThrow(ImportLineError);
  });
});

describe('edited copies in exports', () => {
  it('export and import as copies: beside their original, never duplicates of it, with their edit and rule set', async () => {
    const from = new SqliteStore({ dataDir: makeTempDir(), durability: 'normal' });
    const to = new SqliteStore({ dataDir: makeTempDir(), durability: 'normal' });
    try {
      const event = { source: 'checkout', event: 'transfer:succeeded', transferId: ID, checkoutId: null, email: null, walletAddress: null, validation: 'valid' as const, headers: {}, body };
      const original = await from.saveEvent({ ...event, receivedAt: 1_000, ruleSetHash: 'set-a' });
      const edited = Buffer.from(JSON.stringify({ event: 'transfer:succeeded', result: { id: 'changed-by-the-edit' } }));
      await from.saveEditedCopy({ ...event, validation: 'invalid', body: edited, ruleSetHash: 'set-b', editedFrom: original.id, editedAt: 2_000, via: 'console' });
      const lines = (await from.listEventsForExport({}, 10)).map((e) => JSON.stringify(recordFromStored(e)));
      expect(JSON.parse(lines[1]!)).toMatchObject({ ruleSetHash: 'set-b', edit: { editedFrom: original.id, editedAt: '1970-01-01T00:00:02.000Z', via: 'console', number: 1 } });

      expect(await to.importEvents(lines.map(parseRecordLine))).toEqual({ imported: 2, duplicates: 0, seenBefore: 0 });
      expect(await to.importEvents(lines.map(parseRecordLine))).toEqual({ imported: 0, duplicates: 2, seenBefore: 0 });
      const imported = await to.listEventsForExport({}, 10);
      expect(imported.map((e) => [e.transferId, e.validation, e.ruleSetHash, e.edit?.number ?? 0])).toEqual([[ID, 'valid', 'set-a', 0], [ID, 'invalid', 'set-b', 1]]);
      expect(imported[1]!.body.equals(edited)).toBe(true);
    } finally {
      await from.close();
      await to.close();
    }
  });
});
