import type { Config } from '../config.js';
import { HookrelayError } from '../errors.js';
import { AdminClient } from './admin-client.js';
import { runningServerAdminToken } from './command-target.js';
import type { RunningServer } from './running-server.js';

type Env = Record<string, string | undefined>;

export interface ServedSecret {
  /** The secret the running server verifies the source with (the first, during a rotation); null: unsigned. */
  value: string | null;
  /** Where the server has it from, e.g. "HOOKRELAY_SECRET in the environment of hookrelay serve". */
  origin: string;
}

/**
 * The secret the running server verifies `source` with, asked of its admin API. When this terminal cannot
 * get the admin token, the answer names the secret the server needs and where it has it from (its runtime
 * file says so), never guessing with this terminal's own settings.
 */
export async function servedSecret(server: RunningServer, config: Readonly<Config>, source: string, env: Env, token?: string): Promise<ServedSecret> {
  const listed = server.info.sources.find((s) => s.name === source);
  if (!listed) throw new HookrelayError('not_found', `The running server at ${server.info.url} has no source "${source}" (it has ${server.info.sources.map((s) => `"${s.name}"`).join(', ')}).`);
  let adminToken: string;
  try {
    adminToken = await runningServerAdminToken(server, config, token, env);
  } catch (err) {
    if (!(err instanceof HookrelayError)) throw err;
    throw new HookrelayError('unauthorized', `The running server at ${server.info.url} verifies source "${source}" with the secret from ${listed.secretFrom}. ${err.message}`);
  }
  const answer = await new AdminClient(server.info.adminUrl, adminToken).call<{ secret: string | null; secretFrom: string }>('GET', `/sources/${encodeURIComponent(source)}/secret`);
  return { value: answer.secret, origin: `${answer.secretFrom}, as the running server at ${server.info.url} (node ${server.info.nodeId}, pid ${server.info.pid}) says` };
}
