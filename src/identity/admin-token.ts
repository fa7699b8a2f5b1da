import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { saveGeneratedValue, readValueFile, type GeneratedValueStorage } from './generated-values.js';

export const ADMIN_TOKEN_FILE = 'admin.token';
/** The name of the generated admin token in the store's settings. */
export const ADMIN_TOKEN_SETTING = 'admin_token';

export interface AdminToken {
  token: string;
  /** Set when the token was generated on this start: shown to the operator once. `file`: its copy (SQLite), or null. */
  generated: { token: string; file: string | null } | null;
}

/**
 * The admin API's bearer token: the configured one (HOOKRELAY_ADMIN_TOKEN), or one generated on the
 * instance's first start and kept in the store (and, on SQLite, in `<dataDir>/admin.token`), so a fresh
 * install never serves its admin API without a token and every node accepts the same one.
 */
export async function ensureAdminToken(configured: string | undefined, storage: GeneratedValueStorage): Promise<AdminToken> {
  if (configured) return { token: configured, generated: null };
  const kept = await saveGeneratedValue(storage, {
    setting: ADMIN_TOKEN_SETTING,
    file: ADMIN_TOKEN_FILE,
    configuredBy: 'HOOKRELAY_ADMIN_TOKEN',
    create: () => `hra_${randomBytes(32).toString('base64url')}`,
  });
  return { token: kept.value, generated: kept.generated ? { token: kept.value, file: kept.file } : null };
}

/** The token kept in `<dataDir>/admin.token`, or undefined when there is none; never creates one. */
export function readStoredAdminToken(dataDir: string): string | undefined {
  return readValueFile(dataDir, ADMIN_TOKEN_FILE);
}

/** Constant-time equality: both sides are hashed first, so neither length nor content leaks through timing. */
export function adminTokenMatches(given: string, expected: string): boolean {
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}
