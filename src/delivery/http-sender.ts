import { performance } from 'node:perf_hooks';
import type { Dispatcher } from 'undici';
import { DestinationRefusedError } from './destination-refused-error.js';
import { ResponseExcerpt } from './response-excerpt.js';
import { USER_AGENT } from './user-agent.js';

export const DEFAULT_MAX_EXCERPT_BYTES = 4096;

export interface SendAttemptInput {
  url: string;
  /** Default POST. */
  method?: Dispatcher.HttpMethod;
  headers?: Readonly<Record<string, string>>;
  body?: string | Uint8Array;
  /** One deadline for the whole attempt: DNS, connect, TLS, response headers and the excerpt of the body. */
  timeoutMs: number;
  /** Normally the guarded dispatcher, so every connection passes the SSRF guard. */
  dispatcher: Dispatcher;
  maxExcerptBytes?: number;
  /** Ends the attempt early (shutdown, a lost lease); reported as error code `aborted`. */
  abort?: AttemptAbort;
}

/** What can end an attempt early: one listener at a time, told once (see LeasedAttempt). */
export interface AttemptAbort {
  readonly aborted: boolean;
  onAbort(stop: () => void): void;
  forget(): void;
}

export interface AttemptError {
  /** `timeout`, `aborted`, `destination_refused`, `invalid_url`, or the socket/undici code (`ECONNRESET`, `UND_ERR_SOCKET`, ...). */
  code: string;
  message: string;
}

export interface AttemptResult {
  status?: number;
  headers?: Record<string, string>;
  durationMs: number;
  responseExcerpt: string;
  error?: AttemptError;
}

// Framing and connection headers are ours to set; a rule copying them from the source must not break the request.
const HEADERS_WE_CONTROL = new Set([
  'host', 'content-length', 'connection', 'keep-alive', 'transfer-encoding', 'te', 'trailer', 'upgrade', 'expect', 'proxy-connection',
]);

/**
 * `compute(key)`, kept in `cache` for the next call: a worker sends to the same few rule URLs, with the same
 * few header names, on every attempt. Bounded: a cache that reaches `max` entries starts over.
 */
function cached<V>(cache: Map<string, V>, max: number, key: string, compute: (key: string) => V): V {
  let value = cache.get(key);
  if (value === undefined) {
    value = compute(key);
    if (cache.size >= max) cache.clear();
    cache.set(key, value);
  }
  return value;
}

const MAX_CACHED = 1_000;
const lowerCaseNames = new Map<string, string>();
const toLowerCase = (name: string): string => name.toLowerCase();

// for-in rather than Object.entries in these two: they run on every attempt, and an array per header adds up.
function outgoingHeaders(headers: Readonly<Record<string, string>> | undefined, hasBody: boolean): Record<string, string> {
  const result: Record<string, string> = { 'user-agent': USER_AGENT };
  if (hasBody) result['content-type'] = 'application/json';
  for (const name in headers) {
    const lower = cached(lowerCaseNames, MAX_CACHED, name, toLowerCase);
    if (!HEADERS_WE_CONTROL.has(lower)) result[lower] = headers[name]!;
  }
  return result;
}

function flattenHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const flat: Record<string, string> = {};
  for (const name in headers) {
    const value = headers[name];
    if (value !== undefined) flat[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return flat;
}

const TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

/** An error undici reported (the attempt's own deadline and shutdown are reported where they happen). */
function describeError(error: unknown, timeoutMs: number): AttemptError {
  if (error instanceof DestinationRefusedError) return { code: error.code, message: error.message };
  const err = error as { code?: unknown; message?: unknown; cause?: { code?: unknown; message?: unknown } };
  const code = typeof err.code === 'string' ? err.code : typeof err.cause?.code === 'string' ? err.cause.code : 'network_error';
  if (TIMEOUT_CODES.has(code)) return { code: 'timeout', message: `no complete response within ${timeoutMs} ms` };
  const message = String(err.message ?? error);
  const cause = err.cause?.message ? ` (${String(err.cause.message)})` : '';
  return { code, message: `${message}${cause}` };
}

interface HttpTarget {
  origin: string;
  path: string;
}

const targets = new Map<string, HttpTarget | null>();

function parseTarget(url: string): HttpTarget | null {
  try {
    const parsed = new URL(url);
    return parsed.protocol === 'http:' || parsed.protocol === 'https:' ? { origin: parsed.origin, path: `${parsed.pathname}${parsed.search}` } : null;
  } catch {
    return null;
  }
}

function httpTarget(url: string): HttpTarget | null {
  return cached(targets, MAX_CACHED, url, parseTarget);
}

/**
 * One HTTP attempt. Never throws for network trouble: the outcome is data (status, headers, excerpt,
 * error) for `classifyAttempt` and the attempt log. Redirects are returned, not followed.
 *
 * Built on undici's `dispatch` with a handler that keeps the excerpt as chunks arrive: no response stream,
 * no promise per chunk, which halves the CPU an attempt costs compared with `request()`.
 */
export function sendAttempt(input: SendAttemptInput): Promise<AttemptResult> {
  const started = performance.now();
  const elapsed = (): number => Math.round(performance.now() - started);
  const target = httpTarget(input.url);
  if (!target) {
    // The URL itself stays out of the message: Slack and Zapier hook URLs are secrets.
    return Promise.resolve({ durationMs: elapsed(), responseExcerpt: '', error: { code: 'invalid_url', message: 'the destination is not an http(s) URL' } });
  }
  const excerpt = new ResponseExcerpt(input.maxExcerptBytes ?? DEFAULT_MAX_EXCERPT_BYTES);

  return new Promise<AttemptResult>((resolve) => {
    let status: number | undefined;
    let headers: Record<string, string> | undefined;
    let exchange: Dispatcher.DispatchController | null = null;
    let done = false;

    const finish = (error?: AttemptError): void => {
      if (done) return;
      done = true;
      clearTimeout(deadline);
      input.abort?.forget();
      const result: AttemptResult = { durationMs: elapsed(), responseExcerpt: excerpt.text() };
      if (status !== undefined) result.status = status;
      if (headers !== undefined) result.headers = headers;
      if (error !== undefined) result.error = error;
      resolve(result);
    };
    // Ends the attempt now. undici starts an exchange only once its connection settles (DNS and connect
    // may hang): until then there is nothing to abort, and it is aborted the moment it starts.
    const stop = (error: AttemptError): void => {
      finish(error);
      exchange?.abort(new Error(error.message));
    };
    const deadline = setTimeout(() => stop({ code: 'timeout', message: `no complete response within ${input.timeoutMs} ms` }), input.timeoutMs);
    const aborted = (): void => stop({ code: 'aborted', message: 'attempt aborted before it completed' });
    if (input.abort?.aborted) {
      aborted();
      return;
    }
    input.abort?.onAbort(aborted);

    const handler: Dispatcher.DispatchHandler = {
      onRequestStart(controller) {
        exchange = controller;
        if (done) controller.abort(new Error('the attempt already ended'));
      },
      onResponseStart(_controller, statusCode, responseHeaders) {
        status = statusCode;
        headers = flattenHeaders(responseHeaders);
      },
      onResponseData(controller, chunk) {
        // The cap is reached: the rest of a huge body is not read, and its connection is closed.
        if (excerpt.add(chunk)) {
          finish();
          controller.abort(new Error('response excerpt complete'));
        }
      },
      onResponseEnd() {
        finish();
      },
      onResponseError(_controller, error) {
        finish(describeError(error, input.timeoutMs));
      },
    };
    try {
      input.dispatcher.dispatch(
        {
          origin: target.origin,
          path: target.path,
          method: input.method ?? 'POST',
          headers: outgoingHeaders(input.headers, input.body !== undefined),
          body: input.body ?? null,
          // Belt and braces: undici's own timers, in case the deadline's abort is late.
          headersTimeout: input.timeoutMs,
          bodyTimeout: input.timeoutMs,
        },
        handler,
      );
    } catch (error) {
      finish(describeError(error, input.timeoutMs));
    }
  });
}
