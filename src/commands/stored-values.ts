import { ADMIN_TOKEN_FILE, ADMIN_TOKEN_SETTING, readStoredAdminToken } from '../identity/admin-token.js';
import type { Config } from '../config.js';
import { readStoredSourceSecret, sourceSecretFile, sourceSecretSetting } from '../identity/source-secrets.js';
import { openCommandStore } from './command-store.js';

export interface StoredValue {
  value: string;
  /** Where it was found, for messages (never the value). */
  origin: string;
}

/**
 * A value `serve` generated: the one kept in the store (every node uses it), else, for a data dir whose
 * server has not started since it kept values only in files, that file.
 */
async function readGenerated(config: Readonly<Config>, setting: string, file: string, readFile: () => string | undefined): Promise<StoredValue | undefined> {
  const store = await openCommandStore(config);
  if (store) {
    try {
      const value = await store.getSetting(setting);
      if (value !== null) return { value, origin: config.database.url === undefined ? `the database in ${config.dataDir}` : 'the database' };
    } finally {
      await store.close();
    }
  }
  if (config.database.url !== undefined) return undefined;
  const value = readFile();
  return value === undefined ? undefined : { value, origin: `${config.dataDir}/${file}` };
}

/** The signing secret `serve` generated for a source without a configured one. */
export function readGeneratedSourceSecret(config: Readonly<Config>, source: string): Promise<StoredValue | undefined> {
  return readGenerated(config, sourceSecretSetting(source), sourceSecretFile(source), () => readStoredSourceSecret(config.dataDir, source));
}

/** The admin token `serve` generated when HOOKRELAY_ADMIN_TOKEN is unset. */
export function readGeneratedAdminToken(config: Readonly<Config>): Promise<StoredValue | undefined> {
  return readGenerated(config, ADMIN_TOKEN_SETTING, ADMIN_TOKEN_FILE, () => readStoredAdminToken(config.dataDir));
}
