import { readdirSync, readFileSync } from 'node:fs';

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
