import { hostname } from 'node:os';
import { request } from 'undici';
import type { Config } from '../config.js';
import { openCommandStore } from './command-store.js';
import { readRuntimeFile, runtimeFilePath, type RuntimeInfo } from '../runtime/runtime-file.js';
import { describeStore, sameStore, storeIdentityOf, type StoreIdentity } from '../runtime/store-identity.js';

/** How long a running server has to answer /healthz before its runtime file counts as stale. */
const ANSWER_TIMEOUT_MS = 2_000;

export interface RunningServer {
  info: RuntimeInfo;
  /** True when the server uses another store than this terminal's configuration names. */
  storeDiffers: boolean;
}

/** Whether a process with this pid exists (EPERM: it does, as another user's). */
function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function answers(url: string): Promise<boolean> {
  try {
    const response = await request(`${url}/healthz`, { headersTimeout: ANSWER_TIMEOUT_MS, bodyTimeout: ANSWER_TIMEOUT_MS });
    await response.body.dump();
    return response.statusCode === 200;
  } catch {
    return false;
  }
}

/**
 * The server running for this configuration: the one whose runtime file is in its data dir, if its pid
 * lives and its URL answers (else the file is stale, left by a crash, and ignored).
 */
export async function findRunningServer(config: Pick<Config, 'dataDir' | 'database'>): Promise<RunningServer | undefined> {
  const info = readRuntimeFile(config.dataDir);
  if (!info || !pidAlive(info.pid) || !(await answers(info.url))) return undefined;
  return { info, storeDiffers: !sameStore(info.store, storeIdentityOf(config)) };
}

/** A live node of this configuration's PostgreSQL database, found in the node registry. */
export interface RegisteredNode {
  id: string;
  pid: number;
  host: string;
  /** Base URL of its admin API. */
  url: string;
}

/**
 * On PostgreSQL, a live node of the database whose admin API answers, from the node registry: one on this
 * machine first. Used when no runtime file is in this terminal's data dir (the node runs with another one).
 */
export async function findRegisteredNode(config: Readonly<Config>): Promise<RegisteredNode | undefined> {
  if (config.database.url === undefined) return undefined;
  const store = await openCommandStore(config);
  if (!store) return undefined;
  let nodes;
  try {
    nodes = await store.listLiveNodes();
  } finally {
    await store.close();
  }
  const here = hostname();
  const candidates = nodes.filter((node) => node.url).sort((a, b) => Number(b.host === here) - Number(a.host === here));
  for (const node of candidates) {
    if (await answers(node.url!)) return { id: node.id, pid: node.pid, host: node.host, url: node.url! };
  }
  return undefined;
}

/** What a command says on stderr when it asks a server whose store is not the terminal's. */
export function otherStoreNote(server: RunningServer, terminal: StoreIdentity): string {
  return `the running server at ${server.info.adminUrl} (pid ${server.info.pid}) uses ${describeStore(server.info.store)}, not ${describeStore(terminal)} as this terminal's settings say: asking the server`;
}

export function noServerFound(config: Pick<Config, 'dataDir'>): string {
  return `no running server found for this configuration (no live ${runtimeFilePath(config.dataDir)})`;
}

/** What a command says on stderr when it works on the store without a server. */
export function offlineNote(config: Pick<Config, 'dataDir' | 'database'>, what: string): string {
  return `${noServerFound(config)}; ${what} ${describeStore(storeIdentityOf(config))} directly`;
}
