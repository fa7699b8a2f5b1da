/** application/json or any structured-syntax `+json` type, with optional parameters (charset=utf-8). */
const JSON_MEDIA_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;

export function isJsonContentType(header: string | undefined): boolean {
  return header !== undefined && JSON_MEDIA_TYPE.test(header.trim());
}

/** Bodies must arrive as sent: signatures cover the exact bytes, so compressed or transformed bodies are refused. */
export function isIdentityEncoding(header: string | undefined): boolean {
  return header === undefined || header.trim() === '' || header.trim().toLowerCase() === 'identity';
}
