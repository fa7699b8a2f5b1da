import { Option, type Command } from 'commander';
import { loadConfig } from '../config.js';
import { HookrelayError } from '../errors.js';
import type { AdminBackend } from './admin-backend.js';
import { LocalBackend } from './local-backend.js';
import { RemoteBackend } from './remote-backend.js';
import { readGeneratedAdminToken } from './stored-values.js';
import { isThisMachine } from './this-machine.js';

export interface TargetFlags {
  dataDir?: string;
  rulesDir?: string;
  url?: string;
  token?: string;
  json?: boolean;
}

type Env = Record<string, string | undefined>;

/** Where a command works: the data dir (local mode, default) or a running server's admin API (`--url`). */
export function addTargetOptions(command: Command): Command {
  return command
    .option('--data-dir <dir>', 'local mode: the data dir to open directly (HOOKRELAY_DATA_DIR, default ./data)')
    .option('--rules-dir <dir>', 'local mode: rules used by replay (HOOKRELAY_RULES_DIR, default ./rules)')
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

export function openLocal(flags: TargetFlags, env: Env, options: { create?: boolean } = {}): LocalBackend {
  const config = loadConfig(env, { ...(flags.dataDir && { dataDir: flags.dataDir }), ...(flags.rulesDir && { rulesDir: flags.rulesDir }) });
  return LocalBackend.open(config, env, options);
}

export async function openBackend(flags: TargetFlags, env: Env): Promise<AdminBackend> {
  if (flags.url === undefined) return openLocal(flags, env);
  if (flags.dataDir !== undefined || flags.rulesDir !== undefined) {
    throw new HookrelayError('bad_request', '--url (remote mode) and --data-dir/--rules-dir (local mode) exclude each other.');
  }
  return new RemoteBackend(flags.url, await remoteAdminToken(flags.url, flags.token, env));
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

/** Opens the backend, runs `fn`, and always closes it. */
export async function withBackend<T>(backend: AdminBackend, fn: (backend: AdminBackend) => Promise<T>): Promise<T> {
  try {
    return await fn(backend);
  } finally {
    await backend.close();
  }
}
