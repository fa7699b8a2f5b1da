import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { HookrelayError } from './errors.js';

export const ADMIN_TOKEN_FILE = 'admin.token';

export interface AdminToken {
  token: string;
  /** Set when the token was generated on this start: shown to the operator once. */
  generated: { token: string; file: string } | null;
}

/**
 * The admin API's bearer token: the configured one (HOOKRELAY_ADMIN_TOKEN), or one generated on first
 * start and kept in `<dataDir>/admin.token` (mode 0600) for later starts, so a fresh install never serves
 * its admin API without a token.
 */
export function ensureAdminToken(configured: string | undefined, dataDir: string): AdminToken {
  if (configured) return { token: configured, generated: null };
  const stored = readStoredAdminToken(dataDir);
  if (stored !== undefined) return { token: stored, generated: null };
  const file = join(dataDir, ADMIN_TOKEN_FILE);
  mkdirSync(dataDir, { recursive: true });
  const token = `hra_${randomBytes(32).toString('base64url')}`;
  // wx: never overwrite a token another process created a moment ago.
  writeFileSync(file, `${token}\n`, { mode: 0o600, flag: 'wx' });
  return { token, generated: { token, file } };
}

/** The token kept in `<dataDir>/admin.token`, or undefined when there is none; never creates one. */
export function readStoredAdminToken(dataDir: string): string | undefined {
  const file = join(dataDir, ADMIN_TOKEN_FILE);
  let stored: string;
  try {
    stored = readFileSync(file, 'utf8').trim();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  if (stored.length === 0) throw new HookrelayError('invalid_config', `${file} is empty: delete it to have a new admin token generated, or set HOOKRELAY_ADMIN_TOKEN`);
  return stored;
}

/** Constant-time equality: both sides are hashed first, so neither length nor content leaks through timing. */
export function adminTokenMatches(given: string, expected: string): boolean {
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}
