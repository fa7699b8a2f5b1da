// The admin API, called with the session cookie. Mutations echo the CSRF cookie in X-CSRF-Token.

const BASE = '/admin/api';

export class ApiError extends Error {
  constructor(status, body) {
    super(body?.error?.message ?? `HTTP ${status}`);
    this.status = status;
    this.code = body?.error?.code ?? 'http_error';
    this.details = body?.error?.details ?? null;
  }
}

export function readCookie(name) {
  for (const part of document.cookie.split(';')) {
    const [key, ...rest] = part.trim().split('=');
    if (key === name) return decodeURIComponent(rest.join('='));
  }
  return '';
}

/** Query object → '?a=1&b=2', leaving out empty values. */
export function queryString(query = {}) {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value !== undefined && value !== null && value !== '') params.set(key, String(value));
  }
  const text = params.toString();
  return text ? `?${text}` : '';
}

/** Calls the admin API; resolves with the parsed JSON body, rejects with ApiError. A lost session goes to the log-in page. */
export async function api(path, { method = 'GET', body, query } = {}) {
  const headers = { accept: 'application/json' };
  if (method !== 'GET') headers['x-csrf-token'] = readCookie('hookrelay_csrf');
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(`${BASE}${path}${queryString(query)}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    credentials: 'same-origin',
    cache: 'no-store',
  });
  const text = await response.text();
  let parsed = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    parsed = null;
  }
  if (response.status === 401) {
    window.location.assign('/console/login');
    throw new ApiError(401, parsed);
  }
  if (!response.ok) throw new ApiError(response.status, parsed);
  return parsed;
}

export async function logOut() {
  await fetch('/console/logout', { method: 'POST', headers: { 'x-csrf-token': readCookie('hookrelay_csrf') }, credentials: 'same-origin' });
  window.location.assign('/console/login');
}
