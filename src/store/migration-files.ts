import { readdirSync, readFileSync } from 'node:fs';
import { HookrelayError } from '../errors.js';

const MIGRATION_FILE = /^(\d{3})_([a-z0-9_]+)\.sql$/;

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/** The numbered, append-only SQL files (NNN_name.sql) of one backend's migrations folder, in order. */
export function readMigrations(dir: URL): Migration[] {
  return readdirSync(dir)
    .map((file) => ({ file, match: MIGRATION_FILE.exec(file) }))
    .filter((entry): entry is { file: string; match: RegExpExecArray } => entry.match !== null)
    .map(({ file, match }) => ({ version: Number(match[1]), name: match[2]!, sql: readFileSync(new URL(file, dir), 'utf8') }))
    .sort((a, b) => a.version - b.version);
}

/**
 * Refuses a database written by a newer hookrelay, naming both versions: its schema is unknown to this build
 * (migrations are expand-then-contract, so only a version this build has never heard of stops it).
 * `elsewhere` says what else the operator may point hookrelay at.
 */
export function refuseNewerSchema(applied: Iterable<number>, migrations: readonly Migration[], elsewhere: string): void {
  const newest = migrations.at(-1)?.version ?? 0;
  const databaseVersion = Math.max(0, ...applied);
  if (databaseVersion > newest) {
    throw new HookrelayError(
      'invalid_config',
      `The database has schema version ${databaseVersion}, newer than this hookrelay knows (${newest}). Upgrade hookrelay or use ${elsewhere}.`,
      { databaseVersion, knownVersion: newest },
    );
  }
}
