import { describe, expect, it } from 'vitest';
import { EXPORT_FORMAT, ImportLineError, parseRecordLine } from '../../../src/operations/export-format.js';

const body = Buffer.from(JSON.stringify({ event: 'transfer:succeeded', result: { id: 'tr_1' } }));
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
    const event = parseRecordLine(JSON.stringify({ ...record, transferId: 'tr_1' }));
    expect(event.transferId).toBe('tr_1');
    expect(event.body.equals(body)).toBe(true);
  });

  it('still imports exports that call it resultId', () => {
    expect(parseRecordLine(JSON.stringify({ ...record, resultId: 'tr_1' })).transferId).toBe('tr_1');
  });

  it('refuses a record whose key does not match its body', () => {
    expect(() => parseRecordLine(JSON.stringify({ ...record, transferId: 'tr_2' }))).toThrow(ImportLineError);
  });
});
