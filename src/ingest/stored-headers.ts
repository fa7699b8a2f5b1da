import type { IncomingHttpHeaders } from 'node:http';

/** Credentials that must never reach the store. Signatures stay: they let a resend reproduce the original. */
const CREDENTIAL_HEADERS = new Set(['authorization', 'proxy-authorization', 'cookie', 'x-api-key']);

export function headersToStore(headers: IncomingHttpHeaders): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || CREDENTIAL_HEADERS.has(name)) continue;
    kept[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return kept;
}

/** Headers from elsewhere (an import), names in any case: the same rule, credentials never kept. */
export function withoutCredentials(headers: Readonly<Record<string, string>>): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (!CREDENTIAL_HEADERS.has(name.toLowerCase())) kept[name] = value;
  }
  return kept;
}
