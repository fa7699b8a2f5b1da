import { parseRetryAfter } from './retry-after.js';

/** The receiver's answer judged: accepted, worth another attempt (if the schedule has one), or never. */
export type AttemptVerdict =
  | { verdict: 'delivered' }
  | { verdict: 'retryable'; reason: string; retryAfterMs?: number }
  | { verdict: 'permanent'; reason: string };

export interface AttemptObservation {
  status?: number;
  /** Response headers; names in any case. */
  headers?: Readonly<Record<string, string | undefined>>;
  error?: { code: string; message?: string };
  /** Statuses the rule wants retried although they would dead-letter (e.g. 404 during a receiver's deploy). */
  retryOn?: readonly number[];
  /** Epoch ms, to read an HTTP-date Retry-After. */
  now: number;
}

// 408 Request Timeout, 425 Too Early, 429 Too Many Requests: the receiver asks us to come back.
const RETRYABLE_4XX = new Set([408, 425, 429]);

// Errors that a later attempt cannot fix: refused by policy or not a usable URL.
const PERMANENT_ERROR_CODES = new Set(['destination_refused', 'invalid_url', 'ERR_INVALID_URL', 'UND_ERR_INVALID_ARG']);

// The connection ended before any answer. On a pooled keep-alive connection this is most often the destination
// closing it as idle while the request was on its way: a race no timer rules out on a busy machine.
const LOST_CONNECTION_CODES = new Set(['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET']);

/** Whether an attempt without a status lost its connection; takes the error code, or the row's `code: message`. */
export function lostConnection(error: string | null | undefined): boolean {
  if (!error) return false;
  const colon = error.indexOf(':');
  return LOST_CONNECTION_CODES.has(colon < 0 ? error : error.slice(0, colon));
}

function header(headers: AttemptObservation['headers'], name: string): string | undefined {
  for (const [key, value] of Object.entries(headers ?? {})) {
    if (key.toLowerCase() === name) return value;
  }
  return undefined;
}

function retry(reason: string, observation: AttemptObservation): AttemptVerdict {
  const retryAfterMs = parseRetryAfter(header(observation.headers, 'retry-after'), observation.now);
  return retryAfterMs === undefined ? { verdict: 'retryable', reason } : { verdict: 'retryable', reason, retryAfterMs };
}

function classifyStatus(status: number, observation: AttemptObservation): AttemptVerdict {
  if (status >= 200 && status <= 299) return { verdict: 'delivered' };
  const reason = `HTTP ${status}`;
  if (observation.retryOn?.includes(status)) return retry(reason, observation);
  if (status >= 500 && status <= 599) return retry(reason, observation);
  if (RETRYABLE_4XX.has(status)) return retry(reason, observation);
  if (status >= 300 && status <= 399) {
    const location = header(observation.headers, 'location');
    return { verdict: 'permanent', reason: `${reason} redirect not followed${location ? ` (Location: ${location})` : ''}; update the destination URL` };
  }
  return { verdict: 'permanent', reason };
}

/**
 * What one attempt means for the delivery. A status, once received, is the receiver's verdict and wins
 * over a later error (a 200 whose body then stalls was still accepted). Without a status: permanent
 * errors dead-letter, every other error (timeout, refused or reset connection, DNS) retries.
 */
export function classifyAttempt(observation: AttemptObservation): AttemptVerdict {
  if (observation.status !== undefined) return classifyStatus(observation.status, observation);
  const error = observation.error;
  if (!error) return { verdict: 'retryable', reason: 'no response' };
  const reason = error.message ? `${error.code}: ${error.message}` : error.code;
  return PERMANENT_ERROR_CODES.has(error.code) ? { verdict: 'permanent', reason } : { verdict: 'retryable', reason };
}
