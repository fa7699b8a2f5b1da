import { HookrelayError } from '../errors.js';
import type { EventPosition } from '../store/event-store.js';

// Opaque to clients: a versioned prefix and the position, base64url-encoded. Only this module reads them.
const EVENT_PREFIX = 'e1';
const DELIVERY_PREFIX = 'd1';

function encode(parts: (string | number)[]): string {
  return Buffer.from(parts.join(':')).toString('base64url');
}

function decode(cursor: string, prefix: string, size: number): number[] {
  const [given, ...numbers] = Buffer.from(cursor, 'base64url').toString('utf8').split(':');
  const values = numbers.map(Number);
  if (given !== prefix || values.length !== size || !values.every((n) => Number.isSafeInteger(n) && n >= 0)) {
    throw new HookrelayError('bad_request', 'cursor is not one this list issued; pass nextCursor back unchanged', {
      issues: [{ path: 'cursor', message: 'not a cursor of this list', code: 'invalid_cursor' }],
    });
  }
  return values;
}

export function encodeEventCursor(position: EventPosition): string {
  return encode([EVENT_PREFIX, position.id, position.receivedAt]);
}

export function decodeEventCursor(cursor: string): EventPosition {
  const [id, receivedAt] = decode(cursor, EVENT_PREFIX, 2);
  return { id: id!, receivedAt: receivedAt! };
}

export function encodeDeliveryCursor(id: number): string {
  return encode([DELIVERY_PREFIX, id]);
}

export function decodeDeliveryCursor(cursor: string): number {
  return decode(cursor, DELIVERY_PREFIX, 1)[0]!;
}
