import type { Command } from 'commander';
import { loadConfig } from '../config.js';
import { HookrelayError } from '../errors.js';
import { findServer } from './command-target.js';
import { offlineNote } from './running-server.js';
import { servedSecret } from './server-secret.js';
import { readGeneratedAdminToken, readGeneratedSourceSecret, type StoredValue } from './stored-values.js';

interface ShowFlags {
  adminToken?: boolean;
  dataDir?: string;
}

type Env = Record<string, string | undefined>;

/** The secret a source verifies with: its configured one (the first, during a rotation), else the one `serve` generated. */
export async function sourceSecretFor(source: string, env: Env, dataDir?: string): Promise<StoredValue | undefined> {
  const config = loadConfig(env, dataDir === undefined ? {} : { dataDir });
  const configured = config.sources.find((s) => s.name === source);
  if (configured?.scheme === 'none') throw new HookrelayError('bad_request', `Source "${source}" is unsigned (scheme: none): it has no secret.`);
  const first = configured?.secrets[0];
  if (first !== undefined) return { value: first, origin: `the configured secret of source "${source}"` };
  return readGeneratedSourceSecret(config, source);
}

async function show(source: string | undefined, flags: ShowFlags): Promise<void> {
  const env = process.env;
  let found: StoredValue | undefined;
  if (flags.adminToken) {
    if (source !== undefined) throw new HookrelayError('bad_request', '--admin-token takes no source name.');
    const config = loadConfig(env, flags.dataDir === undefined ? {} : { dataDir: flags.dataDir });
    found = config.admin.token ? { value: config.admin.token, origin: 'HOOKRELAY_ADMIN_TOKEN' } : await readGeneratedAdminToken(config);
    if (!found) throw new HookrelayError('not_found', 'No admin token: HOOKRELAY_ADMIN_TOKEN is unset and hookrelay serve has not generated one with these settings yet.');
  } else {
    const name = source ?? 'checkout';
    found = await secretInUse(name, env, flags.dataDir);
    if (!found) throw new HookrelayError('not_found', `No secret for source "${name}": none is configured and hookrelay serve has not generated one with these settings yet.`);
  }
  // The value alone on stdout, for `$(...)`; where it came from on stderr.
  process.stdout.write(`${found.value}\n`);
  process.stderr.write(`(from ${found.origin})\n`);
}

/** The secret the running server verifies with (asked of it), else, with none running, the one `serve` would use from these settings. */
async function secretInUse(source: string, env: Env, dataDir: string | undefined): Promise<StoredValue | undefined> {
  const config = loadConfig(env, dataDir === undefined ? {} : { dataDir });
  const server = await findServer(config, env);
  if (server) {
    const served = await servedSecret(server, config, source, env);
    if (served.value === null) throw new HookrelayError('bad_request', `Source "${source}" is unsigned on the running server (scheme: none): it has no secret.`);
    return { value: served.value, origin: served.origin };
  }
  process.stderr.write(`${offlineNote(config, 'reading')}\n`);
  return sourceSecretFor(source, env, dataDir);
}

export function registerSecretsCommand(program: Command): void {
  const secrets = program.command('secrets').description('The secrets hookrelay serve uses, configured or generated');
  secrets
    .command('show [source]')
    .description('Print the signing secret of a source (default checkout) that the running server verifies with (asked of its admin API), or, with no server running, the one serve would use; or the admin token. Where it comes from goes to stderr')
    .option('--admin-token', 'print the admin token instead')
    .option('--data-dir <dir>', 'SQLite: the data dir of the server (HOOKRELAY_DATA_DIR, default ./data); PostgreSQL is found by HOOKRELAY_DATABASE_URL')
    .action(show);
}
