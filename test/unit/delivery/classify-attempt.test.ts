import { describe, expect, it } from 'vitest';
import { classifyAttempt, type AttemptObservation, type AttemptOutcome } from '../../../src/delivery/classify-attempt.js';

const now = Date.parse('2025-01-01T00:00:00Z');
const DAY = 24 * 60 * 60 * 1000;

type Row = [string, Omit<AttemptObservation, 'now'>, AttemptOutcome];

const table: Row[] = [
  ['200', { status: 200 }, { outcome: 'delivered' }],
  ['201', { status: 201 }, { outcome: 'delivered' }],
  ['204', { status: 204 }, { outcome: 'delivered' }],
  ['299', { status: 299 }, { outcome: 'delivered' }],
  ['200 whose body then timed out: the receiver already accepted', { status: 200, error: { code: 'timeout', message: 'x' } }, { outcome: 'delivered' }],
  ['500', { status: 500 }, { outcome: 'retry', reason: 'HTTP 500' }],
  ['502', { status: 502 }, { outcome: 'retry', reason: 'HTTP 502' }],
  ['599', { status: 599 }, { outcome: 'retry', reason: 'HTTP 599' }],
  ['503 + Retry-After seconds', { status: 503, headers: { 'retry-after': '120' } }, { outcome: 'retry', reason: 'HTTP 503', retryAfterMs: 120_000 }],
  ['503 + Retry-After (header name in any case)', { status: 503, headers: { 'Retry-After': '7' } }, { outcome: 'retry', reason: 'HTTP 503', retryAfterMs: 7000 }],
  ['429 + Retry-After HTTP-date', { status: 429, headers: { 'retry-after': 'Wed, 01 Jan 2025 00:10:00 GMT' } }, { outcome: 'retry', reason: 'HTTP 429', retryAfterMs: 600_000 }],
  ['429 + Retry-After in the past', { status: 429, headers: { 'retry-after': 'Tue, 31 Dec 2024 23:00:00 GMT' } }, { outcome: 'retry', reason: 'HTTP 429', retryAfterMs: 0 }],
  ['429 + Retry-After a year away is capped at 24 h', { status: 429, headers: { 'retry-after': String(365 * 86_400) } }, { outcome: 'retry', reason: 'HTTP 429', retryAfterMs: DAY }],
  ['429 + unreadable Retry-After is ignored', { status: 429, headers: { 'retry-after': 'soon' } }, { outcome: 'retry', reason: 'HTTP 429' }],
  ['429 + negative Retry-After is ignored', { status: 429, headers: { 'retry-after': '-5' } }, { outcome: 'retry', reason: 'HTTP 429' }],
  ['429', { status: 429 }, { outcome: 'retry', reason: 'HTTP 429' }],
  ['408', { status: 408 }, { outcome: 'retry', reason: 'HTTP 408' }],
  ['425', { status: 425 }, { outcome: 'retry', reason: 'HTTP 425' }],
  ['400', { status: 400 }, { outcome: 'dead', reason: 'HTTP 400' }],
  ['401', { status: 401 }, { outcome: 'dead', reason: 'HTTP 401' }],
  ['404', { status: 404 }, { outcome: 'dead', reason: 'HTTP 404' }],
  ['410', { status: 410 }, { outcome: 'dead', reason: 'HTTP 410' }],
  ['422', { status: 422 }, { outcome: 'dead', reason: 'HTTP 422' }],
  ['404 listed in retryOn', { status: 404, retryOn: [404, 409] }, { outcome: 'retry', reason: 'HTTP 404' }],
  ['409 listed in retryOn, honouring Retry-After', { status: 409, retryOn: [409], headers: { 'retry-after': '3' } }, { outcome: 'retry', reason: 'HTTP 409', retryAfterMs: 3000 }],
  ['400 not listed in retryOn', { status: 400, retryOn: [404] }, { outcome: 'dead', reason: 'HTTP 400' }],
  ['301 is not followed', { status: 301, headers: { location: 'https://new.example/hook' } }, { outcome: 'dead', reason: 'HTTP 301 redirect not followed (Location: https://new.example/hook); update the destination URL' }],
  ['307 without Location', { status: 307 }, { outcome: 'dead', reason: 'HTTP 307 redirect not followed; update the destination URL' }],
  ['302 listed in retryOn', { status: 302, retryOn: [302] }, { outcome: 'retry', reason: 'HTTP 302' }],
  ['600 (not HTTP)', { status: 600 }, { outcome: 'dead', reason: 'HTTP 600' }],
  ['timeout', { error: { code: 'timeout', message: 'no complete response within 10000 ms' } }, { outcome: 'retry', reason: 'timeout: no complete response within 10000 ms' }],
  ['connection refused', { error: { code: 'ECONNREFUSED', message: 'connect ECONNREFUSED' } }, { outcome: 'retry', reason: 'ECONNREFUSED: connect ECONNREFUSED' }],
  ['connection reset', { error: { code: 'ECONNRESET', message: 'read ECONNRESET' } }, { outcome: 'retry', reason: 'ECONNRESET: read ECONNRESET' }],
  ['socket closed', { error: { code: 'UND_ERR_SOCKET', message: 'other side closed' } }, { outcome: 'retry', reason: 'UND_ERR_SOCKET: other side closed' }],
  ['DNS failure', { error: { code: 'ENOTFOUND', message: 'getaddrinfo ENOTFOUND' } }, { outcome: 'retry', reason: 'ENOTFOUND: getaddrinfo ENOTFOUND' }],
  ['TLS certificate error', { error: { code: 'CERT_HAS_EXPIRED', message: 'certificate has expired' } }, { outcome: 'retry', reason: 'CERT_HAS_EXPIRED: certificate has expired' }],
  ['aborted by shutdown', { error: { code: 'aborted' } }, { outcome: 'retry', reason: 'aborted' }],
  ['SSRF refusal', { error: { code: 'destination_refused', message: 'destination x refused: 10.0.0.1 is private' } }, { outcome: 'dead', reason: 'destination_refused: destination x refused: 10.0.0.1 is private' }],
  ['not an http URL', { error: { code: 'invalid_url', message: 'bad' } }, { outcome: 'dead', reason: 'invalid_url: bad' }],
  ['undici invalid argument', { error: { code: 'UND_ERR_INVALID_ARG', message: 'bad header' } }, { outcome: 'dead', reason: 'UND_ERR_INVALID_ARG: bad header' }],
  ['neither status nor error', {}, { outcome: 'retry', reason: 'no response' }],
];

describe('classifyAttempt', () => {
  it.each(table)('%s', (_name, observation, expected) => {
    expect(classifyAttempt({ ...observation, now })).toEqual(expected);
  });
});
