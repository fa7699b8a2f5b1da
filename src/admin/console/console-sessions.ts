import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { CookieOptions, Request, Response } from 'express';
import type { SessionVerifier } from '../api/auth.js';
import { systemClock, type Clock } from '../../store/clock.js';
import type { ConsoleSession, ConsoleSessionStore } from '../../store/console-session-store.js';

export const SESSION_COOKIE = 'hookrelay_session';
export const CSRF_COOKIE = 'hookrelay_csrf';
export const CSRF_HEADER = 'x-csrf-token';
const DEFAULT_TTL_MS = 12 * 60 * 60 * 1000;
const MAX_SESSIONS = 1000;

export interface ConsoleSessionOptions {
  /** Where sessions are kept: the database every node shares. */
  store: ConsoleSessionStore;
  /** How long a log-in lasts (default 12 hours). */
  ttlMs?: number;
  /** The public URL the console is reached through (config `publicUrl`): its origin is accepted too. */
  publicUrl?: string;
  /** The store's clock (default: the system clock): a session ends when the store's now passes its end. */
  clock?: Clock;
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

/** `http` or `https` as the request arrived: express's `req.protocol` honours `server.trustProxy`. */
function requestScheme(req: IncomingMessage): string {
  const protocol = (req as IncomingMessage & { protocol?: unknown }).protocol;
  if (typeof protocol === 'string') return protocol;
  return (req.socket as { encrypted?: boolean } | undefined)?.encrypted ? 'https' : 'http';
}

/** The session id as stored: its sha256, so the database never holds a cookie value a browser could present. */
function idHashOf(id: string): string {
  return createHash('sha256').update(id).digest('hex');
}

/**
 * Web console log-ins. The admin token is checked once at log-in; the browser then holds only a random
 * session id (HttpOnly cookie) whose hash the store keeps with an expiry, so a log-in is valid on every
 * node that shares the database, survives restarts, and a log-out on one node ends it on all. Each
 * session has its own CSRF token, handed to the page in a readable cookie; a mutation must echo it in
 * `X-CSRF-Token` and come from this origin (`Origin` / `Sec-Fetch-Site`). The admin API takes it as its
 * `SessionVerifier`.
 */
export class ConsoleSessions implements SessionVerifier {
  private readonly store: ConsoleSessionOptions['store'];
  private readonly ttlMs: number;
  private readonly clock: Clock;
  private readonly publicHost: string | undefined;
  private readonly publicOrigin: string | undefined;
  private readonly publicIsHttps: boolean;

  constructor(options: ConsoleSessionOptions) {
    this.store = options.store;
    this.ttlMs = options.ttlMs ?? DEFAULT_TTL_MS;
    this.clock = options.clock ?? systemClock;
    this.publicHost = options.publicUrl ? new URL(options.publicUrl).host : undefined;
    this.publicOrigin = options.publicUrl ? new URL(options.publicUrl).origin : undefined;
    this.publicIsHttps = options.publicUrl?.startsWith('https:') ?? false;
  }

  /** Starts a session and sets both cookies. Call only after the admin token was checked. */
  async start(req: Request, res: Response): Promise<void> {
    // A new log-in replaces the session this browser had (no fixation onto an old id).
    const previous = readCookie(req, SESSION_COOKIE);
    if (previous) await this.store.deleteConsoleSession(idHashOf(previous));
    const id = randomBytes(32).toString('base64url');
    const csrf = randomBytes(32).toString('base64url');
    await this.store.saveConsoleSession({ idHash: idHashOf(id), csrf, expiresAt: this.clock.now() + this.ttlMs }, MAX_SESSIONS);
    const base: CookieOptions = { sameSite: 'strict', path: '/', secure: req.secure || this.publicIsHttps, maxAge: this.ttlMs };
    res.cookie(SESSION_COOKIE, id, { ...base, httpOnly: true });
    res.cookie(CSRF_COOKIE, csrf, { ...base, httpOnly: false });
  }

  /** Ends the session (if any) on every node and clears both cookies. */
  async end(req: Request, res: Response): Promise<void> {
    const id = readCookie(req, SESSION_COOKIE);
    if (id) await this.store.deleteConsoleSession(idHashOf(id));
    res.clearCookie(SESSION_COOKIE, { path: '/', httpOnly: true, sameSite: 'strict' });
    res.clearCookie(CSRF_COOKIE, { path: '/', sameSite: 'strict' });
  }

  /** True when the request carries the cookie of a live session. */
  async verifySession(req: IncomingMessage): Promise<boolean> {
    return (await this.sessionOf(req)) !== null;
  }

  /**
   * For mutations made with the session cookie: `X-CSRF-Token` must equal the session's token (which is
   * also the value of the csrf cookie) and the request must come from this origin.
   */
  async checkCsrf(req: IncomingMessage): Promise<boolean> {
    const given = headerText(req, CSRF_HEADER);
    if (!given || readCookie(req, CSRF_COOKIE) !== given || !this.isSameOrigin(req, { required: true })) return false;
    const session = await this.sessionOf(req);
    return session !== null && secretsMatch(given, session.csrf);
  }

  /**
   * Same-origin check from the headers browsers add. `Sec-Fetch-Site`, when sent, must be `same-origin`;
   * `Origin`, when sent, must name this origin, scheme included (see `isThisOrigin`), except that `null`
   * (what browsers send under `Referrer-Policy: no-referrer`) is accepted only together with
   * `Sec-Fetch-Site: same-origin`.
   * With `required`, one of the two must vouch for the request; without it, only contrary evidence refuses.
   */
  isSameOrigin(req: IncomingMessage, { required }: { required: boolean }): boolean {
    const site = headerText(req, 'sec-fetch-site');
    const origin = headerText(req, 'origin');
    if (site !== undefined && site !== 'same-origin') return false;
    let originMatches = false;
    if (origin !== undefined && origin !== 'null') {
      let parsed: URL;
      try {
        parsed = new URL(origin);
      } catch {
        return false;
      }
      if (!this.isThisOrigin(parsed, req)) return false;
      originMatches = true;
    }
    if (origin === 'null' && site !== 'same-origin') return false;
    return !required || originMatches || site === 'same-origin';
  }

  /**
   * The public URL's origin exactly: behind a TLS proxy the browser says https although this server is
   * reached over http, so the scheme comes from `publicUrl`, and `http://` with the public host is
   * refused. Any other host must be the request's own Host, with the scheme the request came in by
   * (https only when a trusted proxy says so).
   */
  private isThisOrigin(origin: URL, req: IncomingMessage): boolean {
    if (origin.host === this.publicHost) return origin.origin === this.publicOrigin;
    return origin.host === headerText(req, 'host') && origin.protocol === `${requestScheme(req)}:`;
  }

  private async sessionOf(req: IncomingMessage): Promise<ConsoleSession | null> {
    const id = readCookie(req, SESSION_COOKIE);
    if (!id) return null;
    return this.store.getConsoleSession(idHashOf(id));
  }
}
