import { randomBytes } from 'node:crypto';
import type { SourceConfig } from '../config.js';
import { saveGeneratedValue, readValueFile, type GeneratedValueStorage } from './generated-values.js';

export interface GeneratedSecret {
  source: string;
  secret: string;
  /** The file copy in the data dir (SQLite), or null (PostgreSQL: the database only). */
  file: string | null;
}

/** The name of a source's generated secret in the store's settings. */
export function sourceSecretSetting(source: string): string {
  return `source_secret/${source}`;
}

/** The file a source's generated secret is copied to in the data dir (SQLite; earlier versions kept it only there). */
export function sourceSecretFile(source: string): string {
  return `${source}.secret`;
}

/** The secret kept in `<dataDir>/<source>.secret`, or undefined when there is none; never creates one. */
export function readStoredSourceSecret(dataDir: string, source: string): string | undefined {
  return readValueFile(dataDir, sourceSecretFile(source));
}

function newSecret(scheme: SourceConfig['scheme']): string {
  const key = randomBytes(32);
  // Standard Webhooks secrets are base64 keys with a whsec_ prefix; the checkout scheme takes any string.
  return scheme === 'standard-webhooks' ? `whsec_${key.toString('base64')}` : key.toString('hex');
}

/**
 * Gives every signed source without a configured secret one generated on the instance's first start and
 * kept in the store, so a fresh install is never silently unsigned and every node verifies with the same
 * secret. Returns the sources with their secrets and the secrets generated just now (to be shown once).
 */
export async function ensureSourceSecrets(sources: readonly SourceConfig[], storage: GeneratedValueStorage): Promise<{ sources: SourceConfig[]; generated: GeneratedSecret[] }> {
  const generated: GeneratedSecret[] = [];
  const resolved: SourceConfig[] = [];
  for (const source of sources) {
    if (source.scheme === 'none' || source.secrets.length > 0) {
      resolved.push(source);
      continue;
    }
    const kept = await saveGeneratedValue(storage, {
      setting: sourceSecretSetting(source.name),
      file: sourceSecretFile(source.name),
      configuredBy: source.name === 'checkout' ? 'HOOKRELAY_SECRET' : `the secrets of source "${source.name}"`,
      create: () => newSecret(source.scheme),
    });
    if (kept.generated) generated.push({ source: source.name, secret: kept.value, file: kept.file });
    resolved.push({ ...source, secrets: [kept.value] });
  }
  return { sources: resolved, generated };
}
