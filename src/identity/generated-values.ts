import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { HookrelayError } from '../errors.js';
import type { SettingStore } from '../store/setting-store.js';

/** Where generated values are kept: the store (every node reads it) and, on SQLite, a readable file copy. */
export interface GeneratedValueStorage {
  store: SettingStore;
  dataDir: string;
  /** SQLite: also keep each value in its file in the data dir (0600), as the README describes. */
  fileCopies: boolean;
  logger: Logger;
}

export interface GeneratedValue {
  /** The name in the store's settings. */
  setting: string;
  /** The file name in the data dir. */
  file: string;
  /** Where an operator sets their own instead (named in warnings). */
  configuredBy: string;
  create: () => string;
}

export interface SavedValue {
  value: string;
  /** True when this start created the value: it is shown to the operator once. */
  generated: boolean;
  /** The file copy in the data dir, or null (PostgreSQL keeps no copy). */
  file: string | null;
}

/** The value in `<dataDir>/<file>`, or undefined when there is none; never creates one. */
export function readValueFile(dataDir: string, file: string): string | undefined {
  const path = join(dataDir, file);
  let text: string;
  try {
    text = readFileSync(path, 'utf8').trim();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  if (text.length === 0) throw new HookrelayError('invalid_config', `${path} is empty: delete it, or write the value into it`);
  return text;
}

/**
 * A value generated once for the whole instance and kept in the store, so every node that shares the
 * database uses the same one: the first node to start stores it, the others read it. A file in the data
 * dir from a version that kept it there (or from a SQLite data dir moved to PostgreSQL) is what gets
 * stored, so an upgrade keeps the value senders already use. Values are never logged.
 */
export async function saveGeneratedValue(storage: GeneratedValueStorage, value: GeneratedValue): Promise<SavedValue> {
  const path = join(storage.dataDir, value.file);
  const fromFile = readValueFile(storage.dataDir, value.file);
  const candidate = fromFile ?? value.create();
  const stored = await storage.store.claimSetting(value.setting, candidate);
  if (fromFile !== undefined && fromFile !== stored) {
    storage.logger.warn({ file: path }, `${path} differs from the value kept in the database, which is the one used; set ${value.configuredBy} to choose one`);
  }
  if (storage.fileCopies && fromFile === undefined) {
    mkdirSync(storage.dataDir, { recursive: true });
    try {
      // wx: never overwrite a file another process created a moment ago.
      writeFileSync(path, `${stored}\n`, { mode: 0o600, flag: 'wx' });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
  return { value: stored, generated: fromFile === undefined && stored === candidate, file: storage.fileCopies ? path : null };
}
