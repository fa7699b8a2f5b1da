import { describe, expect, it } from 'vitest';
import { EXPORT_FORMAT } from '../../../src/operations/export-format.js';
import { ImportLineError, maxImportLineBytes, parseRecordLine } from '../../../src/operations/import-record.js';
import { sampleTransferSucceeded } from '../../../src/samples/transfer-succeeded.js';
import { MAX_RECEIVED_COUNT } from '../../../src/store/event-store.js';

const LIMITS = { maxBody: 64 * 1024, maxDepth: 64 };

/** A line as an attacker would write it: an unsigned body, a credential, a claimed validation, a huge count. */
function forged(overrides: Record<string, unknown> = {}, body: unknown = { event: 'x:forged', result: { id: 'f-1' } }): string {
  return JSON.stringify({
    format: EXPORT_FORMAT, source: 'not-configured-here', event: 'x:forged', transferId: 'f-1', validation: 'valid',
    checkoutId: 'claimed', email: 'claimed@example.com', walletAddress: null,
    receivedAt: '2026-01-01T00:00:00.000Z', lastReceivedAt: '2026-01-01T00:00:00.000Z', receivedCount: MAX_RECEIVED_COUNT,
    headers: { Authorization: 'Bearer leaked', cookie: 'sid=1', 'X-Api-Key': 'k', 'proxy-authorization': 'Basic x', 'x-trace': 'kept' },
    bodyBase64: Buffer.from(typeof body === 'string' ? body : JSON.stringify(body)).toString('base64'),
    ...overrides,
  });
}

describe('an import line is untrusted input', () => {
  it('drops credentials in any case, and works out validation and lookup columns from the body', () => {
    const event = parseRecordLine(forged(), LIMITS);
    expect(event.headers).toEqual({ 'x-trace': 'kept' });
    expect(event).toMatchObject({ validation: 'unrecognised', checkoutId: null, email: null, source: 'not-configured-here', receivedCount: MAX_RECEIVED_COUNT });
    const sample = sampleTransferSucceeded();
    const real = parseRecordLine(forged({ event: 'transfer:succeeded', transferId: sample.result.id, validation: 'unrecognised' }, sample), LIMITS);
    expect(real).toMatchObject({ validation: 'valid', checkoutId: sample.result.checkoutId, email: sample.result.email });
  });

  it('keeps an edited copy\'s stored validation and columns, on purpose', () => {
    const edit = { editedFrom: 3, editedAt: '2026-01-02T00:00:00.000Z', via: 'cli', number: 1 };
    const event = parseRecordLine(forged({ validation: 'invalid', edit }, { not: 'an event' }), LIMITS);
    expect(event).toMatchObject({ validation: 'invalid', checkoutId: 'claimed', transferId: 'f-1', headers: { 'x-trace': 'kept' } });
  });

  it('refuses counts beyond an integer, bodies ingest would refuse or over maxBody, and bodies not under their key', () => {
    const refusals: [string, RegExp][] = [
      [forged({ receivedCount: MAX_RECEIVED_COUNT + 1 }), /^receivedCount: Too big/],
      [forged({ edit: { editedFrom: 1, editedAt: '2026-01-02T00:00:00.000Z', via: 'cli', number: 2 ** 31 } }), /^edit\.number: Too big/],
      [forged({}, 'x'.repeat(LIMITS.maxBody + 1)), /more than maxBody/],
      [forged({}, '{"event":"x:forged","result":{"id":"f-1"'), /does not hold a JSON body/],
      [forged({}, { event: 'x:forged', result: { id: 'f-1'.repeat(100) } }), /refused as a webhook would be.*result\.id/],
      [forged({}, { event: 'x:other', result: { id: 'f-1' } }), /do not match/],
      [forged({}, `{"event":"x:forged","result":{"id":"f-1","deep":${'['.repeat(5_000)}${']'.repeat(5_000)}}}`), /more than maxDepth \(64\) levels deep/],
      [forged({ edit: { editedFrom: 1, editedAt: '2026-01-02T00:00:00.000Z', via: 'cli', number: 1 } }, '['.repeat(65) + ']'.repeat(65)), /more than maxDepth/],
    ];
    for (const [line, message] of refusals) expect(() => parseRecordLine(line, LIMITS)).toThrow(message);
    expect(() => parseRecordLine('{"format":', LIMITS)).toThrow(ImportLineError);
  });

  it('bounds a line by maxBody: base64 of the largest body and its fields fit', () => {
    const line = forged({}, { event: 'x:forged', result: { id: 'f-1' }, pad: 'p'.repeat(LIMITS.maxBody - 100) });
    expect(Buffer.byteLength(line)).toBeLessThan(maxImportLineBytes(LIMITS));
    expect(parseRecordLine(line, LIMITS).body.length).toBeLessThanOrEqual(LIMITS.maxBody);
  });
});
