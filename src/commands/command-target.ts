import { dirname } from 'node:path';
import { Option, type Command } from 'commander';
import { loadConfig, type Config } from '../config.js';
import { HookrelayError } from '../errors.js';
import { describeStore, storeIdentityOf } from '../runtime/store-identity.js';
import type { RuntimeInfo } from '../runtime/runtime-file.js';
import { AdminClient } from './admin-client.js';
import type { AdminTarget } from './admin-target.js';
import { LocalTarget } from './local-target.js';
import { RemoteTarget } from './remote-target.js';
import { findRegisteredNode, findRunningServer, offlineNote, otherStoreNote, type RunningServer } from './running-server.js';
import { readGeneratedAdminToken } from './stored-values.js';
import { isThisMachine } from './this-machine.js';

export interface TargetFlags {
  dataDir?: string;
  rulesDir?: string;
  url?: string;
  token?: string;
  direct?: boolean;
  json?: boolean;
}

type Env = Record<string, string | undefined>;

/**
 * Where a command works: the server running for these settings (found by its runtime file in the data dir),
 * else the store `serve` would open from them, or a server named by `--url`.
 */
export function addTargetOptions(command: Command): Command {
  return command
    .option('--data-dir <dir>', 'the data dir serve uses (HOOKRELAY_DATA_DIR, default ./data): its running server is asked, else its store is opened directly')
    .option('--rules-dir <dir>', 'without a running server, or with --direct: rules used by replay and explain (HOOKRELAY_RULES_DIR, default ./rules)')
    .option('--direct', "open the store directly even while a server runs for these settings (only the store it uses; e.g. to resume with --after-id)")
    .option('--url <url>', 'remote mode: a running server, e.g. http://127.0.0.1:8080 (uses its admin API)')
    .option('--token <token>', 'remote mode: admin token (default: HOOKRELAY_ADMIN_TOKEN, else for a server on this machine <data dir>/admin.token)')
    .option('--json', 'print JSON for scripts instead of tables');
}

/**
 * For commands that only work on a data dir: `--url`/`--token` are left out of the help and, when given
 * anyway, answered with why and what to use instead.
 */
export function addLocalOnlyOptions(command: Command, why: string): Command {
  return command
    .option('--data-dir <dir>', 'the data dir to write to (HOOKRELAY_DATA_DIR, default ./data)')
    .option('--json', 'print JSON for scripts')
    .addOption(new Option('--url <url>').hideHelp())
    .addOption(new Option('--token <token>').hideHelp())
    .hook('preAction', (_command, action) => {
      if (action.opts().url !== undefined) throw new HookrelayError('bad_request', `${why} Run it beside the data dir, with --data-dir <dir>.`);
    });
}

/** The configuration `serve` would read in this terminal, with the command's --data-dir/--rules-dir. */
export function commandConfig(flags: Pick<TargetFlags, 'dataDir' | 'rulesDir'>, env: Env): Readonly<Config> {
  return loadConfig(env, { ...(flags.dataDir && { dataDir: flags.dataDir }), ...(flags.rulesDir && { rulesDir: flags.rulesDir }) });
}

/** The store of this configuration opened directly (events import: the admin API has none); never a store a running server no longer uses. */
export async function openLocal(flags: TargetFlags, env: Env, options: { create?: boolean } = {}): Promise<LocalTarget> {
  const config = commandConfig(flags, env);
  await refuseAbandonedStore(config);
  return LocalTarget.open(config, env, options);
}

/** A command that must open the store itself refuses one that the server running for this configuration no longer uses. */
export async function refuseAbandonedStore(config: Readonly<Config>): Promise<void> {
  const server = await findRunningServer(config);
  if (server?.storeDiffers) {
    const { adminUrl, pid, store } = server.info;
    throw new HookrelayError('conflict', `The running server at ${adminUrl} (pid ${pid}) uses ${describeStore(store)}, not ${describeStore(storeIdentityOf(config))} as this terminal's settings say: run with the server's settings.`);
  }
}

/** Where a command acts: a server's admin API, or the store of this configuration opened directly. */
export type TargetLocation = { url: string; token: string } | { config: Readonly<Config> };

/**
 * `--url`: that server. Otherwise the server running for this configuration (its admin API, so answers are
 * the running system's), even when it uses another store than this terminal names (said on stderr); with
 * none, the store `serve` would use, opened directly (said on stderr).
 */
export async function locateTarget(flags: TargetFlags, env: Env): Promise<TargetLocation> {
  if (flags.url !== undefined) {
    if (flags.dataDir !== undefined || flags.rulesDir !== undefined) {
      throw new HookrelayError('bad_request', '--url (remote mode) and --data-dir/--rules-dir (local mode) exclude each other.');
    }
    if (flags.direct) throw new HookrelayError('bad_request', '--url (remote mode) and --direct (the store opened directly) exclude each other.');
    return { url: flags.url, token: await remoteAdminToken(flags.url, flags.token, env) };
  }
  const config = commandConfig(flags, env);
  if (flags.direct) {
    await refuseAbandonedStore(config);
    return { config };
  }
  const server = await findRunningServer(config);
  if (!server) {
    const node = await findRegisteredNode(config);
    if (node) return { url: node.url, token: await sameStoreAdminToken(config, flags.token, env, node.url) };
    process.stderr.write(`${offlineNote(config, 'reading')}\n`);
    return { config };
  }
  if (server.storeDiffers) process.stderr.write(`${otherStoreNote(server, storeIdentityOf(config))}\n`);
  if (flags.rulesDir !== undefined) process.stderr.write(`--rules-dir is not used: the running server at ${server.info.adminUrl} routes with the rules it loaded\n`);
  return { url: server.info.adminUrl, token: await runningServerAdminToken(server, config, flags.token, env) };
}

/** The events, deliveries and cluster commands' target for `locateTarget`'s answer. */
export async function openTarget(flags: TargetFlags, env: Env): Promise<AdminTarget> {
  const location = await locateTarget(flags, env);
  return 'url' in location ? new RemoteTarget(location.url, location.token) : LocalTarget.open(location.config, env);
}

/**
 * The server a command judges or signs with: the one whose runtime file is in this configuration's data dir,
 * else, on PostgreSQL, a live node of the database found in the node registry, whose runtime record is asked
 * of its admin API (said on stderr, naming the node). Undefined when neither runs.
 */
export async function findServer(config: Readonly<Config>, env: Env, token?: string): Promise<RunningServer | undefined> {
  const server = await findRunningServer(config);
  if (server) return server;
  const node = await findRegisteredNode(config);
  if (!node) return undefined;
  const info = await new AdminClient(node.url, await sameStoreAdminToken(config, token, env, node.url)).call<RuntimeInfo>('GET', '/node');
  process.stderr.write(`no runtime file in ${config.dataDir}; asking node ${info.nodeId} on ${node.host} (pid ${info.pid}) at ${info.adminUrl}, found in the node registry\n`);
  return { info, storeDiffers: false };
}

/** The admin token of a server on this terminal's store: `--token`, HOOKRELAY_ADMIN_TOKEN, else the generated one kept there. */
async function sameStoreAdminToken(config: Readonly<Config>, token: string | undefined, env: Env, url: string): Promise<string> {
  const found = token ?? env.HOOKRELAY_ADMIN_TOKEN ?? (await readGeneratedAdminToken(config))?.value;
  if (!found) throw new HookrelayError('unauthorized', `The running node at ${url} needs its admin token, which it was given rather than generated: pass --token or set HOOKRELAY_ADMIN_TOKEN.`);
  return found;
}

/**
 * The admin token of the server found for this configuration: `--token`, HOOKRELAY_ADMIN_TOKEN, else the one
 * it generated, read from its store: the terminal's when they agree, its data dir's when it runs on SQLite.
 * A server on another PostgreSQL database keeps its token where this terminal cannot look: say what to pass.
 */
export async function runningServerAdminToken(server: RunningServer, config: Readonly<Config>, token: string | undefined, env: Env): Promise<string> {
  const given = token ?? env.HOOKRELAY_ADMIN_TOKEN;
  if (given) return given;
  const { store } = server.info;
  const serverConfig: Readonly<Config> | undefined = !server.storeDiffers
    ? config
    : store.kind === 'sqlite'
      ? { ...config, dataDir: dirname(store.location), database: { ...config.database, url: undefined } }
      : undefined;
  const found = serverConfig && (await readGeneratedAdminToken(serverConfig));
  if (!found) {
    const where = serverConfig ? `its admin token comes from ${server.info.adminTokenFrom}` : `it uses ${describeStore(store)}, where this terminal cannot read its admin token (or run with the server's HOOKRELAY_DATABASE_URL)`;
    throw new HookrelayError('unauthorized', `The running server at ${server.info.adminUrl} needs its admin token: ${where}. Pass --token or set HOOKRELAY_ADMIN_TOKEN.`);
  }
  return found.value;
}

/** `--token`, else HOOKRELAY_ADMIN_TOKEN, else for a server on this machine the token it generated. */
export async function remoteAdminToken(url: string, token: string | undefined, env: Env): Promise<string> {
  const found = token ?? env.HOOKRELAY_ADMIN_TOKEN ?? (await localAdminToken(url, env));
  if (!found) {
    throw new HookrelayError(
      'unauthorized',
      'Remote mode needs the admin token: pass --token or set HOOKRELAY_ADMIN_TOKEN (`hookrelay secrets show --admin-token` prints the generated one), or, for a server on this machine, run with its settings (HOOKRELAY_DATA_DIR, default ./data, or HOOKRELAY_DATABASE_URL).',
    );
  }
  return found;
}

/**
 * A server on this machine kept its generated token in its store (and, on SQLite, in the data dir), which the
 * same user may read; the token is never sent to another host unasked.
 */
async function localAdminToken(url: string, env: Env): Promise<string | undefined> {
  if (!isThisMachine(url)) return undefined;
  return (await readGeneratedAdminToken(loadConfig(env)))?.value;
}

/** Opens the target, runs `fn`, and always closes it. */
export async function withTarget<T>(target: AdminTarget, fn: (target: AdminTarget) => Promise<T>): Promise<T> {
  try {
    return await fn(target);
  } finally {
    await target.close();
  }
}
