import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { HookrelayError } from '../errors.js';
import { CONTRACT_KEYS, compileContract } from './contract-compiler.js';
import { ContractSet, type ContractMode, type LoadedContract } from './contract-set.js';

/** Largest contract file read; a larger one is reported as an error and not read. */
export const CONTRACT_MAX_FILE_BYTES = 1024 * 1024;
/** Contract files read from the directory at most (one per (source, event)). */
export const CONTRACT_MAX_FILES = 1000;

const CONTRACT_FILE = /\.schema\.json$/;

/** What the files on disk are, cheaply: names, sizes and modification times (a reload compares it). */
export async function contractFingerprint(dir: string): Promise<string> {
  const names = await contractFileNames(dir);
  const parts = await Promise.all(names.map(async (name) => {
    const info = await stat(join(dir, name)).catch(() => null);
    return `${name}:${info?.size ?? -1}:${info?.mtimeMs ?? -1}`;
  }));
  return parts.join('\n');
}

async function contractFileNames(dir: string): Promise<string[]> {
  try {
    return (await readdir(dir)).filter((name) => CONTRACT_FILE.test(name)).sort();
  } catch (err) {
    // No contracts directory: no contracts.
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
}

export type ContractLoad = { ok: true; contracts: ContractSet } | { ok: false; errors: string[] };

/** Reads and compiles every `*.schema.json` of `dir`; any problem fails the whole load, each as `file:path: message`. */
export async function loadContracts(dir: string): Promise<ContractLoad> {
  const names = await contractFileNames(dir);
  const errors: string[] = [];
  if (names.length > CONTRACT_MAX_FILES) return { ok: false, errors: [`${dir}: ${names.length} contract files, more than ${CONTRACT_MAX_FILES}`] };
  const contracts: LoadedContract[] = [];
  const pinned = new Map<string, string>();
  for (const file of names) {
    const result = await loadContract(dir, file);
    if (typeof result === 'string') {
      errors.push(result);
      continue;
    }
    const key = `${result.source}\u0000${result.event}`;
    const other = pinned.get(key);
    if (other) {
      errors.push(`${file}:x-hookrelay-event: (${result.source}, ${result.event}) is already pinned by ${other}`);
      continue;
    }
    pinned.set(key, file);
    contracts.push(result);
  }
  return errors.length > 0 ? { ok: false, errors } : { ok: true, contracts: new ContractSet(contracts) };
}

/** One contract, or the `file:path: message` saying why not. */
async function loadContract(dir: string, file: string): Promise<LoadedContract | string> {
  const path = join(dir, file);
  const info = await stat(path);
  if (!info.isFile()) return `${file}: not a regular file`;
  if (info.size > CONTRACT_MAX_FILE_BYTES) return `${file}: ${info.size} bytes, more than ${CONTRACT_MAX_FILE_BYTES}`;
  let schema: unknown;
  try {
    schema = JSON.parse(await readFile(path, 'utf8'));
  } catch (err) {
    return `${file}: not valid JSON: ${(err as Error).message}`;
  }
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return `${file}: a contract is a JSON Schema object`;
  const header = schema as Record<string, unknown>;
  const [sourceKey, eventKey, modeKey] = CONTRACT_KEYS;
  for (const key of [sourceKey, eventKey]) {
    if (typeof header[key] !== 'string' || header[key] === '') return `${file}:${key}: required, a non-empty string`;
  }
  const mode = header[modeKey];
  if (mode !== 'warn' && mode !== 'quarantine') return `${file}:${modeKey}: must be "warn" or "quarantine"`;
  try {
    return { file, source: header[sourceKey] as string, event: header[eventKey] as string, mode: mode as ContractMode, validate: compileContract(header) };
  } catch (err) {
    return `${file}:(schema): ${(err as Error).message}`;
  }
}

/** One error carrying every problem, for start-up: the message lists them one per line. */
export function invalidContractsError(errors: readonly string[]): HookrelayError {
  return new HookrelayError('invalid_contracts', `Invalid contracts (${errors.length}):\n${errors.join('\n')}`, errors);
}
