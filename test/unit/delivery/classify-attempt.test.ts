import { describe, expect, it } from 'vitest';
import { classifyAttempt, lostConnection, type AttemptObservation, type AttemptVerdict } from '../../../src/delivery/classify-attempt.js';

const now = Date.parse('2025-01-01T00:00:00Z');
const DAY = 24 * 60 * 60 * 1000;

type Row = [string, Omit<AttemptObservation, 'now'>, AttemptVerdict];

const table: Row[] = [
  ['200', { status: 200 }, { verdict: 'delivered' }],
  ['201', { status: 201 }, { verdict: 'delivered' }],
  ['204', { status: 204 }, { verdict: 'delivered' }],
  ['299', { status: 299 }, { verdict: 'delivered' }],
  ['200 whose body then timed out: the receiver already accepted', { status: 200, error: { code: 'timeout', message: 'x' } }, { verdict: 'delivered' }],
  ['500', { status: 500 }, { verdict: 'retryable', reason: 'HTTP 500' }],
  ['502', { status: 502 }, { verdict: 'retryable', reason: 'HTTP 502' }],
  ['599', { status: 599 }, { verdict: 'retryable', reason: 'HTTP 599' }],
  ['503 + Retry-After seconds', { status: 503, headers: { 'retry-after': '120' } }, { verdict: 'retryable', reason: 'HTTP 503', retryAfterMs: 120_000 }],
  ['503 + Retry-After (header name in any case)', { status: 503, headers: { 'Retry-After': '7' } }, { verdict: 'retryable', reason: 'HTTP 503', retryAfterMs: 7000 }],
  ['429 + Retry-After HTTP-date', { status: 429, headers: { 'retry-after': 'Wed, 01 Jan 2025 00:10:00 GMT' } }, { verdict: 'retryable', reason: 'HTTP 429', retryAfterMs: 600_000 }],
  ['429 + Retry-After in the past', { status: 429, headers: { 'retry-after': 'Tue, 31 Dec 2024 23:00:00 GMT' } }, { verdict: 'retryable', reason: 'HTTP 429', retryAfterMs: 0 }],
  ['429 + Retry-After a year away is capped at 24 h', { status: 429, headers: { 'retry-after': String(365 * 86_400) } }, { verdict: 'retryable', reason: 'HTTP 429', retryAfterMs: DAY }],
  ['429 + unreadable Retry-After is ignored', { status: 429, headers: { 'retry-after': 'soon' } }, { verdict: 'retryable', reason: 'HTTP 429' }],
  ['429 + negative Retry-After is ignored', { status: 429, headers: { 'retry-after': '-5' } }, { verdict: 'retryable', reason: 'HTTP 429' }],
  ['429', { status: 429 }, { verdict: 'retryable', reason: 'HTTP 429' }],
  ['408', { status: 408 }, { verdict: 'retryable', reason: 'HTTP 408' }],
  ['425', { status: 425 }, { verdict: 'retryable', reason: 'HTTP 425' }],
  ['400', { status: 400 }, { verdict: 'permanent', reason: 'HTTP 400' }],
  ['401', { status: 401 }, { verdict: 'permanent', reason: 'HTTP 401' }],
  ['404', { status: 404 }, { verdict: 'permanent', reason: 'HTTP 404' }],
  ['410', { status: 410 }, { verdict: 'permanent', reason: 'HTTP 410' }],
  ['422', { status: 422 }, { verdict: 'permanent', reason: 'HTTP 422' }],
  ['404 listed in retryOn', { status: 404, retryOn: [404, 409] }, { verdict: 'retryable', reason: 'HTTP 404' }],
  ['409 listed in retryOn, honouring Retry-After', { status: 409, retryOn: [409], headers: { 'retry-after': '3' } }, { verdict: 'retryable', reason: 'HTTP 409', retryAfterMs: 3000 }],
  ['400 not listed in retryOn', { status: 400, retryOn: [404] }, { verdict: 'permanent', reason: 'HTTP 400' }],
  ['301 is not followed', { status: 301, headers: { location: 'https://new.example/hook' } }, { verdict: 'permanent', reason: 'HTTP 301 redirect not followed (Location: https://new.example/hook); update the destination URL' }],
  ['307 without Location', { status: 307 }, { verdict: 'permanent', reason: 'HTTP 307 redirect not followed; update the destination URL' }],
  ['302 listed in retryOn', { status: 302, retryOn: [302] }, { verdict: 'retryable', reason: 'HTTP 302' }],
  ['600 (not HTTP)', { status: 600 }, { verdict: 'permanent', reason: 'HTTP 600' }],
  ['timeout', { error: { code: 'timeout', message: 'no complete response within 10000 ms' } }, { verdict: 'retryable', reason: 'timeout: no complete response within 10000 ms' }],
  ['connection refused', { error: { code: 'ECONNREFUSED', message: 'connect ECONNREFUSED' } }, { verdict: 'retryable', reason: 'ECONNREFUSED: connect ECONNREFUSED' }],
  ['connection reset', { error: { code: 'ECONNRESET', message: 'read ECONNRESET' } }, { verdict: 'retryable', reason: 'ECONNRESET: read ECONNRESET' }],
  ['socket closed', { error: { code: 'UND_ERR_SOCKET', message: 'other side closed' } }, { verdict: 'retryable', reason: 'UND_ERR_SOCKET: other side closed' }],
  ['DNS failure', { error: { code: 'ENOTFOUND', message: 'getaddrinfo ENOTFOUND' } }, { verdict: 'retryable', reason: 'ENOTFOUND: getaddrinfo ENOTFOUND' }],
  ['TLS certificate error', { error: { code: 'CERT_HAS_EXPIRED', message: 'certificate has expired' } }, { verdict: 'retryable', reason: 'CERT_HAS_EXPIRED: certificate has expired' }],
  ['aborted by shutdown', { error: { code: 'aborted' } }, { verdict: 'retryable', reason: 'aborted' }],
  ['SSRF refusal', { error: { code: 'destination_refused', message: 'destination x refused: 10.0.0.1 is private' } }, { verdict: 'permanent', reason: 'destination_refused: destination x refused: 10.0.0.1 is private' }],
  ['not an http URL', { error: { code: 'invalid_url', message: 'bad' } }, { verdict: 'permanent', reason: 'invalid_url: bad' }],
  ['undici invalid argument', { error: { code: 'UND_ERR_INVALID_ARG', message: 'bad header' } }, { verdict: 'permanent', reason: 'UND_ERR_INVALID_ARG: bad header' }],
  ['neither status nor error', {}, { verdict: 'retryable', reason: 'no response' }],
];

describe('classifyAttempt', () => {
  it.each(table)('%s', (_name, observation, expected) => {
    expect(classifyAttempt({ ...observation, now })).toEqual(expected);
  });
});

describe('lostConnection', () => {
  it('names a connection that ended before any answer, from the error code or the row\'s "code: message"', () => {
    for (const code of ['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET']) {
      expect(lostConnection(code)).toBe(true);
      expect(lostConnection(`${code}: other side closed`)).toBe(true);
    }
    for (const other of ['ECONNREFUSED', 'timeout', 'aborted', 'ENOTFOUND: getaddrinfo ENOTFOUND', 'ECONNRESETTING', '', null, undefined]) {
      expect(lostConnection(other)).toBe(false);
    }
  });
});
