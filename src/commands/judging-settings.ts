import type { Config } from '../config.js';
import { createSsrfGuard, type SsrfGuard } from '../delivery/ssrf-guard.js';
import { allowNetworksOrigin } from '../runtime/setting-origins.js';
import { findServer } from './command-target.js';
import { noServerFound } from './running-server.js';

type Env = Record<string, string | undefined>;

export interface JudgingSettings {
  /** The SSRF guard with the allow-list deliveries are judged by. */
  guard: SsrfGuard;
  /** Whose settings these are and where the allow-list comes from, for a line on stderr. */
  judgedBy: string;
  /** True when no server runs for this configuration: the terminal's own settings were used. */
  offline: boolean;
}

/**
 * The network guard a delivery would meet: the running server's allow-list (from its runtime file), else,
 * with no server running, the one `serve` would have from this terminal's configuration, said as offline.
 */
export async function judgingSettings(config: Readonly<Config>, env: Env): Promise<JudgingSettings> {
  const server = await findServer(config, env);
  if (server) {
    const { allowNetworks, allowNetworksFrom } = server.info.delivery;
    return {
      guard: createSsrfGuard({ allowNetworks }),
      judgedBy: `judged with the settings of the running server at ${server.info.adminUrl} (node ${server.info.nodeId}, pid ${server.info.pid}): delivery.allowNetworks ${describeList(allowNetworks)}, from ${allowNetworksFrom}`,
      offline: false,
    };
  }
  const allowNetworks = config.delivery.allowNetworks;
  return {
    guard: createSsrfGuard({ allowNetworks }),
    judgedBy: `${noServerFound(config)}; judged offline with this terminal's settings: delivery.allowNetworks ${describeList(allowNetworks)}, from ${allowNetworksOrigin(config, env)}`,
    offline: true,
  };
}

const describeList = (list: readonly string[]): string => (list.length === 0 ? '[]' : `[${list.join(', ')}]`);
