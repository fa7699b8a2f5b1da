import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setProperty } from 'dot-prop';
import { HookrelayError } from '../errors.js';
import { sampleTransferSucceeded } from '../samples/transfer-succeeded.js';

/** One `--set path=value`: a dotted path into the body and the value, JSON where it parses, else a string. */
export interface FieldSetting {
  path: string;
  value: unknown;
}

/** Parses `result.totalPriceUsd=150`, `result.email=ada@example.com`, `result.claimedTokens.tokenIds=["7"]`. */
export function parseFieldSetting(text: string): FieldSetting {
  const at = text.indexOf('=');
  const path = text.slice(0, Math.max(at, 0)).trim();
  if (at < 1 || path === '') throw new HookrelayError('bad_request', `--set needs path=value, e.g. result.totalPriceUsd=150 (got "${text}")`);
  const raw = text.slice(at + 1);
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    value = raw;
  }
  return { path, value };
}

/** Collects repeated `--set` flags (commander calls this once per flag). */
export function collectFieldSetting(text: string, previous: FieldSetting[] = []): FieldSetting[] {
  return [...previous, parseFieldSetting(text)];
}

/** The body to send: the exact bytes of `file` when nothing is set in it, else JSON with the settings applied. */
export function buildBody(options: { file?: Buffer; transferId?: string; settings: readonly FieldSetting[] }): Buffer {
  if (options.file && options.settings.length === 0 && options.transferId === undefined) return options.file;
  const body = options.file ? parseJsonBody(options.file) : sampleTransferSucceeded();
  if (options.transferId !== undefined) setProperty(body, 'result.id', options.transferId);
  for (const { path, value } of options.settings) setProperty(body, path, value);
  return Buffer.from(JSON.stringify(body));
}

function parseJsonBody(bytes: Buffer): Record<string, unknown> {
  let body: unknown;
  try {
    body = JSON.parse(bytes.toString('utf8'));
  } catch (err) {
    throw new HookrelayError('bad_request', `--set and --transfer-id need a JSON body: ${(err as Error).message}`);
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new HookrelayError('bad_request', '--set and --transfer-id need a JSON object body');
  return body as Record<string, unknown>;
}

/** Kept in the data dir so `--repeat` can send the same bytes (the same transfer) again. */
const LAST_BODY_FILE = 'send-test-last.json';

/** Saved only beside an existing data dir: sending to another machine creates no ./data here. */
export function saveLastBody(dataDir: string, body: Buffer): void {
  if (!existsSync(dataDir)) return;
  writeFileSync(join(dataDir, LAST_BODY_FILE), body, { mode: 0o600 });
}

export function readLastBody(dataDir: string): Buffer {
  const file = join(dataDir, LAST_BODY_FILE);
  try {
    return readFileSync(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    throw new HookrelayError('not_found', `Nothing to repeat: no earlier send-test body in ${file}. Send one first (it is kept there).`);
  }
}

/** The transfer id of a body, for the one-line summary; undefined when it has none. */
export function transferIdOf(body: Buffer): string | undefined {
  try {
    const id = (JSON.parse(body.toString('utf8')) as { result?: { id?: unknown } }).result?.id;
    return typeof id === 'string' ? id : undefined;
  } catch {
    return undefined;
  }
}
