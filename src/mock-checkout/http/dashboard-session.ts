import { randomBytes } from 'node:crypto';
import type { Request, RequestHandler, Response } from 'express';

export const SESSION_COOKIE = 'hookrelay_mock_session';
const SESSION_TTL_MS = 12 * 60 * 60 * 1000;

/**
 * Dashboard log-in sessions: random ids kept in memory (a restart logs everyone out), sent as an
 * HttpOnly, SameSite=Strict cookie. SameSite=Strict is what stops other sites from submitting the
 * dashboard's forms with the cookie attached.
 */
export function createSessionStore(now: () => number = Date.now) {
  const expiries = new Map<string, number>();

  function isValid(id: string | undefined): boolean {
    if (!id) return false;
    const expiry = expiries.get(id);
    if (expiry === undefined) return false;
    if (expiry <= now()) {
      expiries.delete(id);
      return false;
    }
    return true;
  }

  return {
    isValid,

    start(req: Request, res: Response): void {
      const id = randomBytes(32).toString('base64url');
      expiries.set(id, now() + SESSION_TTL_MS);
      res.cookie(SESSION_COOKIE, id, {
        httpOnly: true,
        sameSite: 'strict',
        secure: req.secure,
        path: '/dashboard',
        maxAge: SESSION_TTL_MS,
      });
    },

    end(req: Request, res: Response): void {
      const id = readCookie(req, SESSION_COOKIE);
      if (id) expiries.delete(id);
      res.clearCookie(SESSION_COOKIE, { path: '/dashboard' });
    },

    /** Pages behind the log-in: no valid session → redirect to the log-in form. */
    require(): RequestHandler {
      return (req, res, next) => {
        if (isValid(readCookie(req, SESSION_COOKIE))) return next();
        res.redirect(303, '/dashboard/login');
      };
    },
  };
}

export type SessionStore = ReturnType<typeof createSessionStore>;

export function readCookie(req: Request, name: string): string | undefined {
  for (const part of (req.get('cookie') ?? '').split(';')) {
    const separator = part.indexOf('=');
    if (separator > 0 && part.slice(0, separator).trim() === name) return part.slice(separator + 1).trim();
  }
  return undefined;
}
