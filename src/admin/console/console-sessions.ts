import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { CookieOptions, Request, Response } from 'express';
import type { SessionVerifier } from '../api/auth.js';

export const SESSION_COOKIE = 'hookrelay_session';
export const CSRF_COOKIE = 'hookrelay_csrf';
export const CSRF_HEADER = 'x-csrf-token';
const DEFAULT_TTL_MS = 12 * 60 * 60 * 1000;
const MAX_SESSIONS = 1000;

export interface ConsoleSessionOptions {
  /** How long a log-in lasts (default 12 hours). */
  ttlMs?: number;
  /** The public URL the console is reached through (config `publicUrl`): its origin is accepted too. */
  publicUrl?: string;
  now?: () => number;
}

interface Session {
  csrf: string;
  expiresAt: number;
}

/** Constant-time equality: both sides are hashed first, so neither length nor content leaks through timing. */
function secretsMatch(given: string, expected: string): boolean {
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}

export function readCookie(req: IncomingMessage, name: string): string | undefined {
  const header = req.headers.cookie;
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const separator = part.indexOf('=');
    if (separator > 0 && part.slice(0, separator).trim() === name) return part.slice(separator + 1).trim();
  }
  return undefined;
}

function headerText(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return typeof value === 'string' ? value : undefined;
}

/**
 * Web console log-ins. The admin token is checked once at log-in; the browser then holds only a random
 * session id (HttpOnly cookie) mapped in memory to an expiry, so a restart logs everyone out. Each
 * session has its own CSRF token, handed to the page in a readable cookie; a mutation must echo it in
 * `X-CSRF-Token` and come from this origin (`Origin` / `Sec-Fetch-Site`). The admin API takes it as its
 * `SessionVerifier`.
 */
export class ConsoleSessions implements SessionVerifier {
  private readonly sessions = new Map<string, Session>();
  private readonly ttlMs: number;
  private readonly now: () => number;
  private readonly publicHost: string | undefined;
  private readonly publicIsHttps: boolean;

  constructor(options: ConsoleSessionOptions = {}) {
    this.ttlMs = options.ttlMs ?? DEFAULT_TTL_MS;
    this.now = options.now ?? Date.now;
    this.publicHost = options.publicUrl ? new URL(options.publicUrl).host : undefined;
    this.publicIsHttps = options.publicUrl?.startsWith('https:') ?? false;
  }

  /** Starts a session and sets both cookies. Call only after the admin token was checked. */
  start(req: Request, res: Response): void {
    this.sweep();
    // A new log-in replaces the session this browser had (no fixation onto an old id).
    const previous = readCookie(req, SESSION_COOKIE);
    if (previous) this.sessions.delete(previous);
    const id = randomBytes(32).toString('base64url');
    const csrf = randomBytes(32).toString('base64url');
    this.sessions.set(id, { csrf, expiresAt: this.now() + this.ttlMs });
    const base: CookieOptions = { sameSite: 'strict', path: '/', secure: req.secure || this.publicIsHttps, maxAge: this.ttlMs };
    res.cookie(SESSION_COOKIE, id, { ...base, httpOnly: true });
    res.cookie(CSRF_COOKIE, csrf, { ...base, httpOnly: false });
  }

  /** Forgets the session (if any) and clears both cookies. */
  end(req: Request, res: Response): void {
    const id = readCookie(req, SESSION_COOKIE);
    if (id) this.sessions.delete(id);
    res.clearCookie(SESSION_COOKIE, { path: '/', httpOnly: true, sameSite: 'strict' });
    res.clearCookie(CSRF_COOKIE, { path: '/', sameSite: 'strict' });
  }

  /** True when the request carries the cookie of a live session. */
  verifySession(req: IncomingMessage): boolean {
    return this.sessionOf(req) !== undefined;
  }

  /**
   * For mutations made with the session cookie: `X-CSRF-Token` must equal the session's token (which is
   * also the value of the csrf cookie) and the request must come from this origin.
   */
  checkCsrf(req: IncomingMessage): boolean {
    const session = this.sessionOf(req);
    const given = headerText(req, CSRF_HEADER);
    if (!session || !given || !secretsMatch(given, session.csrf)) return false;
    if (readCookie(req, CSRF_COOKIE) !== given) return false;
    return this.isSameOrigin(req, { required: true });
  }

  /**
   * Same-origin check from the headers browsers add. `Sec-Fetch-Site`, when sent, must be `same-origin`;
   * `Origin`, when sent, must name this host, except that `null` (what browsers send under
   * `Referrer-Policy: no-referrer`) is accepted only together with `Sec-Fetch-Site: same-origin`.
   * With `required`, one of the two must vouch for the request; without it, only contrary evidence refuses.
   */
  isSameOrigin(req: IncomingMessage, { required }: { required: boolean }): boolean {
    const site = headerText(req, 'sec-fetch-site');
    const origin = headerText(req, 'origin');
    if (site !== undefined && site !== 'same-origin') return false;
    let originMatches = false;
    if (origin !== undefined && origin !== 'null') {
      let host: string;
      try {
        host = new URL(origin).host;
      } catch {
        return false;
      }
      if (host !== headerText(req, 'host') && host !== this.publicHost) return false;
      originMatches = true;
    }
    if (origin === 'null' && site !== 'same-origin') return false;
    return !required || originMatches || site === 'same-origin';
  }

  /** Number of live sessions (for tests and metrics). */
  get size(): number {
    this.sweep();
    return this.sessions.size;
  }

  private sessionOf(req: IncomingMessage): Session | undefined {
    const id = readCookie(req, SESSION_COOKIE);
    if (!id) return undefined;
    const session = this.sessions.get(id);
    if (!session) return undefined;
    if (session.expiresAt <= this.now()) {
      this.sessions.delete(id);
      return undefined;
    }
    return session;
  }

  private sweep(): void {
    const now = this.now();
    for (const [id, session] of this.sessions) if (session.expiresAt <= now) this.sessions.delete(id);
    // Oldest first (Map keeps insertion order): a flood of log-ins cannot grow memory without bound.
    for (const id of this.sessions.keys()) {
      if (this.sessions.size < MAX_SESSIONS) break;
      this.sessions.delete(id);
    }
  }
}
