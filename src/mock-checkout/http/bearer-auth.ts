import { createHash, timingSafeEqual } from 'node:crypto';
import type { RequestHandler } from 'express';
import { HookrelayError } from '../../errors.js';

/** Constant-time equality: both sides are hashed first, so neither length nor content leaks through timing. */
export function keysMatch(given: string, expected: string): boolean {
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}

/** Requires `Authorization: Bearer <apiKey>`; anything else is a 401 JSON error. */
export function requireBearer(apiKey: string): RequestHandler {
  return (req, res, next) => {
    const match = /^Bearer\s+(.+)$/i.exec(req.get('authorization') ?? '');
    if (!match || !keysMatch(match[1]!.trim(), apiKey)) {
      res.set('WWW-Authenticate', 'Bearer');
      throw new HookrelayError('unauthorized', 'missing or wrong bearer token');
    }
    next();
  };
}
