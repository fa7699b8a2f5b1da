import { HookrelayError } from '../errors.js';

// Opaque to clients: a versioned prefix plus the list position, base64url-encoded.
const PREFIX = 'mc1:';

export function encodeCursor(position: number): string {
  return Buffer.from(`${PREFIX}${position}`).toString('base64url');
}

export function decodeCursor(cursor: string): number {
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  const position = text.startsWith(PREFIX) ? Number(text.slice(PREFIX.length)) : Number.NaN;
  if (!Number.isSafeInteger(position) || position < 1) {
    throw new HookrelayError('bad_request', 'cursor is not one this server issued');
  }
  return position;
}
