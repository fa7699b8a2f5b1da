import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';

/** The rule files of a directory as read at one moment; the unit that is hashed, compiled and swapped. */
export interface RuleFilesSnapshot {
  dir: string;
  /** False when the directory does not exist (a valid, empty rule set). */
  exists: boolean;
  files: RuleFile[];
  /** Short hex sha256 of the sorted file names and contents. */
  hash: string;
}

export interface RuleFile {
  /**
   * The file's name in `dir` (rule files sit directly in it): how the file is named in messages, the admin
   * API, the console and the CLI, the same on every machine whatever its rules directory.
   */
  name: string;
  text: string;
  /** Set when the file is listed but cannot be read. */
  readError?: string;
}

/** `*.yaml` and `*.yml`; dot files are skipped because editors keep their swap and backup files there. */
export function isRuleFileName(name: string): boolean {
  return /\.ya?ml$/i.test(name) && !name.startsWith('.');
}

export async function readRuleFiles(dir: string): Promise<RuleFilesSnapshot> {
  let names: string[];
  try {
    names = (await readdir(dir)).filter(isRuleFileName).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { dir, exists: false, files: [], hash: hashFiles([]) };
    throw err;
  }
  const files = await Promise.all(
    names.map(async (name): Promise<RuleFile> => {
      const path = join(dir, name);
      try {
        return { name, text: await readFile(path, 'utf8') };
      } catch (err) {
        return { name, text: '', readError: (err as Error).message };
      }
    }),
  );
  return { dir, exists: true, files, hash: hashFiles(files) };
}

function hashFiles(files: readonly RuleFile[]): string {
  const hash = createHash('sha256');
  for (const file of files) hash.update(`${file.name}\0${file.text}\0${file.readError ?? ''}\0`);
  return hash.digest('hex').slice(0, 12);
}
