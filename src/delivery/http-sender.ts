import { performance } from 'node:perf_hooks';
import { request, type Dispatcher } from 'undici';
import { DestinationRefusedError } from './destination-refused-error.js';
import { readExcerpt, ResponseExcerpt } from './response-excerpt.js';
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
  /** Aborts the attempt early (shutdown); reported as error code `aborted`. */
  signal?: AbortSignal;
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

function outgoingHeaders(headers: Readonly<Record<string, string>> | undefined, hasBody: boolean): Record<string, string> {
  const result: Record<string, string> = { 'user-agent': USER_AGENT };
  if (hasBody) result['content-type'] = 'application/json';
  for (const [name, value] of Object.entries(headers ?? {})) {
    const lower = name.toLowerCase();
    if (!HEADERS_WE_CONTROL.has(lower)) result[lower] = value;
  }
  return result;
}

function flattenHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const flat: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) flat[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return flat;
}

const TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

function describeError(error: unknown, timedOut: boolean, timeoutMs: number): AttemptError {
  if (timedOut) return { code: 'timeout', message: `no complete response within ${timeoutMs} ms` };
  if ((error as { name?: unknown }).name === 'AbortError') return { code: 'aborted', message: 'attempt aborted before it completed' };
  if (error instanceof DestinationRefusedError) return { code: error.code, message: error.message };
  const err = error as { code?: unknown; message?: unknown; cause?: { code?: unknown; message?: unknown } };
  const code = typeof err.code === 'string' ? err.code : typeof err.cause?.code === 'string' ? err.cause.code : 'network_error';
  if (TIMEOUT_CODES.has(code)) return { code: 'timeout', message: `no complete response within ${timeoutMs} ms` };
  const message = String(err.message ?? error);
  const cause = err.cause?.message ? ` (${String(err.cause.message)})` : '';
  return { code, message: `${message}${cause}` };
}

/** Rejects when `signal` aborts; never an unhandled rejection. */
function abortion(signal: AbortSignal): Promise<never> {
  const aborted = new Promise<never>((_resolve, reject) => {
    const fail = (): void => reject(Object.assign(new Error('attempt aborted'), { name: 'AbortError' }));
    if (signal.aborted) fail();
    else signal.addEventListener('abort', fail, { once: true });
  });
  aborted.catch(() => {});
  return aborted;
}

function isHttpUrl(url: string): boolean {
  try {
    const { protocol } = new URL(url);
    return protocol === 'http:' || protocol === 'https:';
  } catch {
    return false;
  }
}

/**
 * One HTTP attempt. Never throws for network trouble: the outcome is data (status, headers, excerpt,
 * error) for `classifyAttempt` and the attempt log. Redirects are returned, not followed.
 */
export async function sendAttempt(input: SendAttemptInput): Promise<AttemptResult> {
  const started = performance.now();
  const elapsed = (): number => Math.round(performance.now() - started);
  const excerpt = new ResponseExcerpt(input.maxExcerptBytes ?? DEFAULT_MAX_EXCERPT_BYTES);

  if (!isHttpUrl(input.url)) {
    // The URL itself stays out of the message: Slack and Zapier hook URLs are secrets.
    return { durationMs: elapsed(), responseExcerpt: '', error: { code: 'invalid_url', message: 'the destination is not an http(s) URL' } };
  }

  // One controller for both causes; the listener is removed afterwards so a long-lived shutdown
  // signal does not collect one listener per attempt.
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, input.timeoutMs);
  const abortFromOutside = (): void => controller.abort();
  input.signal?.addEventListener('abort', abortFromOutside, { once: true });
  if (input.signal?.aborted) controller.abort();

  let status: number | undefined;
  let headers: Record<string, string> | undefined;
  try {
    const pending = request(input.url, {
      method: input.method ?? 'POST',
      headers: outgoingHeaders(input.headers, input.body !== undefined),
      body: input.body ?? null,
      dispatcher: input.dispatcher,
      signal: controller.signal,
      // Belt and braces: undici's own timers, in case the abort signal is late.
      headersTimeout: input.timeoutMs,
      bodyTimeout: input.timeoutMs,
    });
    // undici honours an abort only once the connection settles; the race keeps the deadline exact
    // even while DNS or connect hangs. The loser's rejection is expected and ignored.
    pending.catch(() => {});
    const response = await Promise.race([pending, abortion(controller.signal)]);
    status = response.statusCode;
    headers = flattenHeaders(response.headers);
    await readExcerpt(response.body, excerpt);
    return { status, headers, durationMs: elapsed(), responseExcerpt: excerpt.text() };
  } catch (error) {
    const result: AttemptResult = {
      durationMs: elapsed(),
      responseExcerpt: excerpt.text(),
      error: describeError(error, timedOut, input.timeoutMs),
    };
    if (status !== undefined) result.status = status;
    if (headers !== undefined) result.headers = headers;
    return result;
  } finally {
    clearTimeout(timer);
    input.signal?.removeEventListener('abort', abortFromOutside);
  }
}
