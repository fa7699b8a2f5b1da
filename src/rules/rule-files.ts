import { createHash } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { readRegularFile, type RegularFileRead } from './regular-file.js';

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
  /** Set when the file is listed but not read (not a regular file, too large, unreadable); says why. */
  readError?: string;
}

export interface RuleFileLimits {
  /** Largest rule file read; a larger one is reported and not read. */
  maxFileBytes: number;
  /** How long listing the directory or reading one file may take before it is reported as not answering. */
  readTimeoutMs: number;
}

export const RULE_FILE_LIMITS: RuleFileLimits = { maxFileBytes: 1024 * 1024, readTimeoutMs: 10_000 };

/** `*.yaml` and `*.yml`; dot files are skipped because editors keep their swap and backup files there. */
export function isRuleFileName(name: string): boolean {
  return /\.ya?ml$/i.test(name) && !name.startsWith('.');
}

/**
 * Reads of a path still waiting on the file system after their deadline. A later check joins the waiting
 * read instead of starting another, so a file system that stops answering holds one thread-pool thread
 * per file, not one per poll.
 */
const waitingReads = new Map<string, Promise<RegularFileRead>>();

/** Paths whose read is past its deadline and still waiting. */
const overdueReads = new Set<string>();

/**
 * How many rule file reads are past their deadline and still waiting on the file system. Such a read
 * holds a thread-pool thread in the kernel, and a normal exit waits for every thread-pool thread.
 */
export function overdueRuleReads(): number {
  return overdueReads.size;
}

export async function readRuleFiles(dir: string, limits: RuleFileLimits = RULE_FILE_LIMITS): Promise<RuleFilesSnapshot> {
  let names: string[];
  try {
    const listed = await withinDeadline(readdir(dir), limits.readTimeoutMs);
    if (listed === undefined) throw new Error(`the directory was not listed within ${limits.readTimeoutMs} ms`);
    names = listed.filter(isRuleFileName).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { dir, exists: false, files: [], hash: hashFiles([]) };
    throw err;
  }
  const files = await Promise.all(
    names.map(async (name): Promise<RuleFile> => {
      const path = join(dir, name);
      const reading = readOnce(path, limits.maxFileBytes);
      const read = await withinDeadline(reading, limits.readTimeoutMs);
      if (read === undefined) {
        overdueReads.add(path);
        void reading.finally(() => overdueReads.delete(path));
        return { name, text: '', readError: `not read: the file system did not answer within ${limits.readTimeoutMs} ms` };
      }
      return 'text' in read ? { name, text: read.text } : { name, text: '', readError: read.error };
    }),
  );
  return { dir, exists: true, files, hash: hashFiles(files) };
}

function readOnce(path: string, maxBytes: number): Promise<RegularFileRead> {
  const waiting = waitingReads.get(path);
  if (waiting) return waiting;
  const read = readRegularFile(path, maxBytes);
  waitingReads.set(path, read);
  void read.finally(() => waitingReads.delete(path));
  return read;
}

/** The value of `promise`, or undefined when it has not settled within `ms` (it goes on waiting). */
async function withinDeadline<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<undefined>((resolve) => {
    timer = setTimeout(resolve, ms, undefined);
  });
  try {
    return await Promise.race([promise, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

function hashFiles(files: readonly RuleFile[]): string {
  const hash = createHash('sha256');
  for (const file of files) hash.update(`${file.name}\0${file.text}\0${file.readError ?? ''}\0`);
  return hash.digest('hex').slice(0, 12);
}
