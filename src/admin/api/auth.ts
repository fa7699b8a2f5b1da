import type { IncomingMessage } from 'node:http';
import type { RequestHandler } from 'express';
import { HookrelayError } from '../../errors.js';
import { adminTokenMatches } from '../../identity/admin-token.js';
import type { FailedAuthLimiter } from '../failed-auth-limiter.js';

/**
 * The web console's log-ins, as the admin API sees them. The console implements it; without one only
 * bearer tokens are accepted.
 */
export interface SessionVerifier {
  /** True when the request carries the cookie of a live console session (kept in the store: any node's). */
  verifySession(req: IncomingMessage): Promise<boolean>;
  /** For a mutation made with a session: true when its CSRF token and origin check out. */
  checkCsrf(req: IncomingMessage): Promise<boolean>;
}

const READ_ONLY_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
const BEARER = /^Bearer[ \t]+(\S+)[ \t]*$/i;

/**
 * `Authorization: Bearer <admin token>`, compared in constant time; or a console session, whose
 * mutations must also pass the CSRF check. A request that sends a bearer token is judged by it alone;
 * a wrong one counts against the client's failed-authentication limit.
 */
export function requireAdmin(token: string, sessions?: SessionVerifier, limiter?: FailedAuthLimiter): RequestHandler {
  return async (req, res, next) => {
    const authorization = req.headers.authorization;
    if (authorization !== undefined) {
      limiter?.refuseIfLimited(req, res);
      const match = BEARER.exec(authorization);
      if (match && adminTokenMatches(match[1]!, token)) return next();
      limiter?.recordFailed(req);
      res.set('WWW-Authenticate', 'Bearer');
      throw new HookrelayError('unauthorized', 'The bearer token is not the admin token.');
    }
    if (sessions && (await sessions.verifySession(req))) {
      if (READ_ONLY_METHODS.has(req.method) || (await sessions.checkCsrf(req))) return next();
      throw new HookrelayError('forbidden', 'Console changes need the X-CSRF-Token header and must come from the console page.');
    }
    res.set('WWW-Authenticate', 'Bearer');
    throw new HookrelayError('unauthorized', 'Send Authorization: Bearer <admin token>.');
  };
}
