import { Option, type Command } from 'commander';
import { ADMIN_TOKEN_FILE, readStoredAdminToken } from '../admin-token.js';
import { loadConfig } from '../config.js';
import { HookrelayError } from '../errors.js';
import type { AdminBackend } from './admin-backend.js';
import { LocalBackend } from './local-backend.js';
import { RemoteBackend } from './remote-backend.js';
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

export function openBackend(flags: TargetFlags, env: Env): AdminBackend {
  if (flags.url === undefined) return openLocal(flags, env);
  if (flags.dataDir !== undefined || flags.rulesDir !== undefined) {
    throw new HookrelayError('bad_request', '--url (remote mode) and --data-dir/--rules-dir (local mode) exclude each other.');
  }
  const token = flags.token ?? env.HOOKRELAY_ADMIN_TOKEN ?? localAdminToken(flags.url, env);
  if (!token) {
    throw new HookrelayError('unauthorized', `Remote mode needs the admin token: pass --token, set HOOKRELAY_ADMIN_TOKEN, or, for a server on this machine, run beside its data dir (${ADMIN_TOKEN_FILE} is read from HOOKRELAY_DATA_DIR, default ./data).`);
  }
  return new RemoteBackend(flags.url, token);
}

/** A server on this machine generated its token into the data dir; the same user may read it from there. */
function localAdminToken(url: string, env: Env): string | undefined {
  if (!isThisMachine(url)) return undefined;
  return readStoredAdminToken(loadConfig(env).dataDir);
}

/** Opens the backend, runs `fn`, and always closes it. */
export async function withBackend<T>(backend: AdminBackend, fn: (backend: AdminBackend) => Promise<T>): Promise<T> {
  try {
    return await fn(backend);
  } finally {
    await backend.close();
  }
}
