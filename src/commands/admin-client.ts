import { request } from 'undici';
import { ERROR_CODES, HookrelayError, type ErrorCode } from '../errors.js';

const REQUEST_TIMEOUT_MS = 30_000;

type Query = Record<string, string | number | boolean | undefined>;

/** A thin client of the admin API (docs/admin-api.md): bearer token, JSON in and out, API errors as typed errors. */
export class AdminClient {
  private readonly base: string;

  constructor(url: string, private readonly token: string) {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw new HookrelayError('bad_request', `--url must be the server's base URL, e.g. http://127.0.0.1:8080, got "${url}".`);
    }
    this.base = `${parsed.origin}${parsed.pathname.replace(/\/+$/, '')}/admin/api`;
  }

  async call<T>(method: 'GET' | 'POST', path: string, options: { query?: Query; body?: unknown } = {}): Promise<T> {
    const search = new URLSearchParams();
    for (const [key, value] of Object.entries(options.query ?? {})) if (value !== undefined) search.set(key, String(value));
    const qs = search.toString();
    const url = `${this.base}${path}${qs ? `?${qs}` : ''}`;
    let response;
    try {
      response = await request(url, {
        method,
        headers: { authorization: `Bearer ${this.token}`, accept: 'application/json', ...(options.body !== undefined && { 'content-type': 'application/json' }) },
        body: options.body === undefined ? undefined : JSON.stringify(options.body),
        headersTimeout: REQUEST_TIMEOUT_MS,
        bodyTimeout: REQUEST_TIMEOUT_MS,
      });
    } catch (err) {
      throw new Error(`cannot reach the admin API at ${this.base}: ${(err as Error).message}`);
    }
    const text = await response.body.text();
    let json: unknown;
    try {
      json = text ? JSON.parse(text) : null;
    } catch {
      throw new Error(`${method} ${path}: HTTP ${response.statusCode}, not a JSON answer (is --url a hookrelay server?)`);
    }
    if (response.statusCode >= 400) throw apiError(response.statusCode, json);
    return json as T;
  }
}

export function apiError(status: number, body: unknown): Error {
  const error = (body as { error?: { code?: string; message?: string; details?: unknown } } | null)?.error;
  const message = error?.message ?? `HTTP ${status}`;
  if (error?.code && error.code in ERROR_CODES) {
    const code = error.code as ErrorCode;
    const hint = code === 'unauthorized' ? ' (pass --token or set HOOKRELAY_ADMIN_TOKEN)' : '';
    return new HookrelayError(code, `${message}${hint}`, error.details);
  }
  return new Error(message);
}
