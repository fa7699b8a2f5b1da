import { describe, expect, it } from 'vitest';
import { HookrelayError } from '../../../src/errors.js';
import { validateEvent } from '../../../src/ingest/validate-event.js';
import { sampleTransferSucceeded } from '../../../src/samples/transfer-succeeded.js';

function issuesOf(body: unknown): string[] {
  try {
    validateEvent(body);
  } catch (err) {
    expect((err as HookrelayError).code).toBe('invalid_payload');
    return ((err as HookrelayError).details as { issues: { path: string }[] }).issues.map((i) => i.path);
  }
  throw new Error('expected a validation error');
}

function messagesOf(body: unknown): Record<string, string> {
  try {
    validateEvent(body);
  } catch (err) {
    return Object.fromEntries(((err as HookrelayError).details as { issues: { path: string; message: string }[] }).issues.map((i) => [i.path, i.message]));
  }
  throw new Error('expected a validation error');
}

describe('validateEvent', () => {
  it('says a missing field is required, and keeps zod\'s words for a wrong one', () => {
    const body = sampleTransferSucceeded() as unknown as { result: Record<string, unknown> };
    delete body.result.email;
    delete body.result.claimedTokens;
    body.result.quantity = 'two';
    expect(messagesOf(body)).toEqual({
      'result.email': 'required (expected string)',
      'result.claimedTokens': 'required',
      'result.quantity': 'Invalid input: expected number, received string',
    });
    expect(messagesOf({ result: { id: 'x' } })).toEqual({ event: 'required (expected string)' });
    expect(messagesOf({ event: 'x', result: null })).toEqual({ result: 'Invalid input: expected object, received null' });
  });

  it('accepts the spec shape and keeps unknown extra fields', () => {
    const body = { ...sampleTransferSucceeded(), extra: 1 };
    (body.result as Record<string, unknown>).newField = { nested: true };
    const { envelope, validation } = validateEvent(body);
    expect(validation).toBe('valid');
    expect((envelope.result as Record<string, unknown>).newField).toEqual({ nested: true });
  });

  it('accepts the newer claimedTokens.tokens list shape', () => {
    const body = sampleTransferSucceeded();
    body.result.claimedTokens = { tokens: [{ tokenId: '7', transactionHash: `0x${'ab'.repeat(32)}` }] };
    expect(validateEvent(body).validation).toBe('valid');
  });

  it('accepts timestamps with any UTC offset and refuses ones without', () => {
    const body = sampleTransferSucceeded();
    body.result.createdAt = '2026-11-22T15:19:22.123+01:00';
    expect(validateEvent(body).validation).toBe('valid');
    body.result.createdAt = '2026-11-22T14:19:22.123';
    expect(issuesOf(body)).toEqual(['result.createdAt']);
  });

  it.each([
    ['id', 'not-a-uuid'],
    ['checkoutId', 42],
    ['walletAddress', 'ABCDEF'],
    ['email', 'nobody'],
    ['quantity', 0],
    ['quantity', '2'],
    ['paymentMethod', 'buy with card'],
    ['networkFeeUsd', -1],
    ['totalPriceUsd', 'free'],
    ['transferCompletedAt', 'yesterday'],
  ])('refuses result.%s = %o with its path', (field, value) => {
    const body = sampleTransferSucceeded();
    body.result[field] = value;
    expect(issuesOf(body)).toEqual([`result.${field}`]);
  });

  it('refuses a transaction hash key that is not 0x hex', () => {
    const body = sampleTransferSucceeded();
    body.result.claimedTokens = { tokenIds: ['1'], transactionHashes: { nothex: ['1'] } };
    expect(issuesOf(body)[0]).toMatch(/^result\.claimedTokens/);
  });

  it('stores other event names with an envelope as unrecognised', () => {
    expect(validateEvent({ event: 'checkout:deleted', result: { id: 'abc' } }).validation).toBe('unrecognised');
  });

  it.each([['constructor'], ['toString'], ['__proto__'], ['hasOwnProperty']])('stores an event named %s as unrecognised', (event) => {
    expect(validateEvent({ event, result: { id: 'abc' } }).validation).toBe('unrecognised');
  });

  it('says a known event name without an envelope is not an envelope, and a bad field is not a valid event', () => {
    const messageOf = (body: unknown): string => {
      try {
        validateEvent(body);
      } catch (err) {
        return (err as HookrelayError).message;
      }
      throw new Error('expected a validation error');
    };
    expect(messageOf({ event: 'transfer:succeeded', result: 'none' })).toContain('an event envelope');
    const body = sampleTransferSucceeded();
    body.result.quantity = 0;
    expect(messageOf(body)).toContain('a valid transfer:succeeded event');
  });

  it.each([[null], [[]], ['text'], [{ event: 'x' }], [{ event: 'x', result: {} }], [{ event: '', result: { id: '1' } }]])('refuses %o without a valid envelope', (body) => {
    expect(issuesOf(body).length).toBeGreaterThan(0);
  });
});
