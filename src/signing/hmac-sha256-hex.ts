import { createHmac, timingSafeEqual } from 'node:crypto';

/** The checkout service's scheme: lower-case hex HMAC-SHA256 of the exact raw body, keyed by the secret. */
export function signHmacSha256Hex(secret: string, body: Uint8Array | string): string {
  return createHmac('sha256', secret).update(body).digest('hex');
}

const HEX_SHA256 = /^[0-9a-f]{64}$/i;

/**
 * True when `header` (hex, optionally prefixed `sha256=`) is the HMAC of `body` under any of `secrets`.
 * Every secret is tried so the time taken does not reveal which one matched; comparison is constant-time.
 */
export function verifyHmacSha256Hex(secrets: readonly string[], body: Uint8Array, header: string): boolean {
  const hex = header.trim().replace(/^sha256=/i, '');
  if (!HEX_SHA256.test(hex)) return false;
  const given = Buffer.from(hex, 'hex');
  let matched = false;
  for (const secret of secrets) {
    const expected = createHmac('sha256', secret).update(body).digest();
    if (expected.length === given.length && timingSafeEqual(expected, given)) matched = true;
  }
  return matched;
}
