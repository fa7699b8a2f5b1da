import type { Logger } from 'pino';
import type { Dispatcher } from 'undici';
import type { SourceConfig } from '../../config.js';
import type { SsrfGuard } from '../../delivery/ssrf-guard.js';
import type { RuleSetWatcher } from '../../rules/watcher.js';
import type { Store } from '../../store/store.js';
import { ensureAdminToken, type AdminToken } from '../admin-token.js';
import { createAdminApi, type AdminApi } from './admin-api.js';
import type { SessionVerifier } from './auth.js';
import type { AdminContext } from './context.js';
import { JobRunner } from './jobs/job-runner.js';

export interface AdminApiParts {
  /** `admin.token` of the config (HOOKRELAY_ADMIN_TOKEN); generated into `dataDir` when unset. */
  configuredToken: string | undefined;
  dataDir: string;
  store: Store;
  rules: RuleSetWatcher;
  worker: { wake(): void } | null;
  dispatcher: Dispatcher;
  guard: SsrfGuard;
  sources: readonly SourceConfig[];
  logger: Logger;
  sessions?: SessionVerifier;
  destinations?: AdminContext['destinations'];
}

export interface StartedAdminApi {
  api: AdminApi;
  jobs: JobRunner;
  token: AdminToken;
}

/** Everything the admin API needs at start: its token, the job runner (failing jobs a restart interrupted) and the router. */
export async function startAdminApi(parts: AdminApiParts): Promise<StartedAdminApi> {
  const token = ensureAdminToken(parts.configuredToken, parts.dataDir);
  const wakeWorker = (): void => parts.worker?.wake();
  const now = Date.now;
  const jobs = await JobRunner.start({ store: parts.store, rules: () => parts.rules.current(), wakeWorker, logger: parts.logger, now });
  const api = createAdminApi({
    context: {
      store: parts.store,
      rules: parts.rules,
      wakeWorker,
      dispatcher: parts.dispatcher,
      guard: parts.guard,
      sources: new Map(parts.sources.map((source) => [source.name, source])),
      logger: parts.logger,
      now,
      ...(parts.destinations && { destinations: parts.destinations }),
    },
    jobs,
    token: token.token,
    ...(parts.sessions && { sessions: parts.sessions }),
  });
  return { api, jobs, token };
}
