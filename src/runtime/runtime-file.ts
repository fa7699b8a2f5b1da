import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';

/**
 * `<dataDir>/hookrelay.runtime.json`: how a command finds the server running with this data dir. Written
 * atomically once the server listens, removed on a clean stop; a crash leaves it, so a reader checks
 * that the pid lives and the URL answers. It holds no secret: only where secrets come from.
 */
export const RUNTIME_FILE = 'hookrelay.runtime.json';

export const RuntimeInfoSchema = z.object({
  /** Base URL of the webhook listener. */
  url: z.string(),
  /** Base URL of the admin API (the webhook listener's unless admin.port gives it one of its own). */
  adminUrl: z.string(),
  pid: z.number().int(),
  nodeId: z.string(),
  version: z.string(),
  startedAt: z.string(),
  store: z.object({ kind: z.enum(['sqlite', 'postgres']), location: z.string() }),
  /** The SSRF guard's allow-list and the setting it came from. */
  delivery: z.object({ allowNetworks: z.array(z.string()), allowNetworksFrom: z.string() }),
  /** Where the admin token comes from (never the token). */
  adminTokenFrom: z.string(),
  /** Each source's scheme and where its secret comes from (never the secret). */
  sources: z.array(z.object({ name: z.string(), scheme: z.string(), secretFrom: z.string() })),
});
export type RuntimeInfo = z.infer<typeof RuntimeInfoSchema>;

export function runtimeFilePath(dataDir: string): string {
  return join(dataDir, RUNTIME_FILE);
}

/** Write-then-rename: a reader sees the old file or the new one, never half of one. */
export function writeRuntimeFile(dataDir: string, info: RuntimeInfo): void {
  mkdirSync(dataDir, { recursive: true });
  const path = runtimeFilePath(dataDir);
  const temporary = `${path}.${info.pid}.tmp`;
  writeFileSync(temporary, `${JSON.stringify(info, null, 2)}\n`, { mode: 0o644 });
  renameSync(temporary, path);
}

/** Removes the file if it is still this process's (another node sharing the data dir may have written it since). */
export function removeRuntimeFile(dataDir: string, pid: number): void {
  if (readRuntimeFile(dataDir)?.pid !== pid) return;
  rmSync(runtimeFilePath(dataDir), { force: true });
}

/** The file's contents, or undefined when there is none or it is not one this version can read. */
export function readRuntimeFile(dataDir: string): RuntimeInfo | undefined {
  let text: string;
  try {
    text = readFileSync(runtimeFilePath(dataDir), 'utf8');
  } catch {
    return undefined;
  }
  try {
    const parsed = RuntimeInfoSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/** The record in the data dir if this process wrote it (another node sharing the data dir may have written it since). */
export function ownRuntimeRecord(dataDir: string): RuntimeInfo | undefined {
  const info = readRuntimeFile(dataDir);
  return info?.pid === process.pid ? info : undefined;
}
