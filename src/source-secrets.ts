import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { SourceConfig } from './config.js';

export interface GeneratedSecret {
  source: string;
  secret: string;
  file: string;
}

function secretFile(dataDir: string, source: string): string {
  return join(dataDir, `${source}.secret`);
}

/** The secret kept in `<dataDir>/<source>.secret`, or undefined when there is none; never creates one. */
export function readStoredSourceSecret(dataDir: string, source: string): string | undefined {
  try {
    return readFileSync(secretFile(dataDir, source), 'utf8').trim();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

function newSecret(scheme: SourceConfig['scheme']): string {
  const key = randomBytes(32);
  // Standard Webhooks secrets are base64 keys with a whsec_ prefix; the checkout scheme takes any string.
  return scheme === 'standard-webhooks' ? `whsec_${key.toString('base64')}` : key.toString('hex');
}

/**
 * Gives every signed source without a configured secret one kept in the data dir (mode 0600), generated on
 * first start, so a fresh install is never silently unsigned. Returns the sources with their secrets and
 * the secrets generated just now (to be shown once).
 */
export function ensureSourceSecrets(sources: readonly SourceConfig[], dataDir: string): { sources: SourceConfig[]; generated: GeneratedSecret[] } {
  const generated: GeneratedSecret[] = [];
  const resolved = sources.map((source) => {
    if (source.scheme === 'none' || source.secrets.length > 0) return source;
    let secret = readStoredSourceSecret(dataDir, source.name);
    if (secret === undefined) {
      const file = secretFile(dataDir, source.name);
      mkdirSync(dataDir, { recursive: true });
      secret = newSecret(source.scheme);
      // wx: never overwrite a secret another process created a moment ago.
      writeFileSync(file, `${secret}\n`, { mode: 0o600, flag: 'wx' });
      generated.push({ source: source.name, secret, file });
    }
    return { ...source, secrets: [secret] };
  });
  return { sources: resolved, generated };
}
