import { fileURLToPath } from 'node:url';
import express, { Router, type Request, type RequestHandler } from 'express';
import { HookrelayError } from '../../errors.js';
import { adminTokenMatches } from '../../identity/admin-token.js';
import type { FailedAuthLimiter } from '../failed-auth-limiter.js';
import type { ConsoleSessions } from './console-sessions.js';
import { loginPage } from './login-page.js';

const ASSETS_DIR = fileURLToPath(new URL('./assets/', import.meta.url));
const SHELL_PATH = fileURLToPath(new URL('./console.html', import.meta.url));

// Scripts, styles and requests only from this origin; no inline script or style, no framing.
const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

export interface ConsoleOptions {
  sessions: ConsoleSessions;
  /** The admin token; the log-in form takes it, the browser never keeps it. */
  adminToken: string;
  /** Counts wrong tokens at the log-in per client address. */
  limiter: FailedAuthLimiter;
}

const securityHeaders: RequestHandler = (_req, res, next) => {
  res.set({
    'Content-Security-Policy': CONTENT_SECURITY_POLICY,
    'X-Content-Type-Options': 'nosniff',
    'Referrer-Policy': 'no-referrer',
    'X-Frame-Options': 'DENY',
    'Cross-Origin-Opener-Policy': 'same-origin',
    'Cross-Origin-Resource-Policy': 'same-origin',
    'Cache-Control': 'no-store',
  });
  next();
};

function wantsJson(req: Request): boolean {
  return req.is('application/json') === 'application/json';
}

function tokenOf(body: unknown): string {
  const token = (body as { token?: unknown } | undefined)?.token;
  return typeof token === 'string' ? token.trim() : '';
}

/**
 * The web console under /console: the log-in form, log-out, the single-page app shell and its static
 * assets. The app itself talks only to the admin API (/admin/api), with the session cookie.
 */
export function createConsoleRouter({ sessions, adminToken, limiter }: ConsoleOptions): Router {
  const router = Router();
  router.use(securityHeaders);
  router.use('/assets', express.static(ASSETS_DIR, { index: false, redirect: false, dotfiles: 'ignore' }));

  router.get('/login', async (req, res) => {
    if (await sessions.verifySession(req)) {
      res.redirect(303, '/console');
      return;
    }
    res.type('html').send(loginPage());
  });

  router.post('/login', express.urlencoded({ extended: false, limit: '8kb' }), express.json({ limit: '8kb' }), async (req, res) => {
    const json = wantsJson(req);
    if (!sessions.isSameOrigin(req, { required: false })) {
      throw new HookrelayError('forbidden', 'Log-in requests must come from the console page itself.');
    }
    const token = tokenOf(req.body);
    if (token !== '') {
      try {
        limiter.refuseIfLimited(req, res);
      } catch (err) {
        if (json) throw err;
        res.status(429).type('html').send(loginPage('Too many wrong tokens from this address: wait a minute, then try again.'));
        return;
      }
    }
    if (token === '' || !adminTokenMatches(token, adminToken)) {
      if (token !== '') limiter.recordFailed(req);
      if (json) throw new HookrelayError('unauthorized', 'That is not the admin token.');
      res.status(401).type('html').send(loginPage('That is not the admin token.'));
      return;
    }
    await sessions.start(req, res);
    if (json) res.json({ ok: true });
    else res.redirect(303, '/console');
  });

  router.post('/logout', async (req, res) => {
    if ((await sessions.verifySession(req)) && !(await sessions.checkCsrf(req))) {
      throw new HookrelayError('forbidden', 'Log-out needs the X-CSRF-Token header and a same-origin request.');
    }
    await sessions.end(req, res);
    res.status(204).end();
  });

  router.get('/', async (req, res) => {
    if (!(await sessions.verifySession(req))) {
      res.redirect(303, '/console/login');
      return;
    }
    res.sendFile(SHELL_PATH, { headers: { 'Content-Type': 'text/html; charset=utf-8' } });
  });

  return router;
}
