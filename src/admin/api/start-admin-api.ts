import type { Logger } from 'pino';
import type { Dispatcher } from 'undici';
import type { SourceConfig } from '../../config.js';
import type { SsrfGuard } from '../../delivery/ssrf-guard.js';
import type { Env } from '../../rules/env-references.js';
import type { RuleSetWatcher } from '../../rules/watcher.js';
import type { NewNode } from '../../store/cluster-store.js';
import type { AdminToken } from '../../identity/admin-token.js';
import type { AdminApi } from './admin-api.js';
import type { SessionVerifier } from './auth.js';
import type { FailedAuthLimiter } from '../failed-auth-limiter.js';
import { JobRunner } from '../../operations/jobs/job-runner.js';
import { StreamHub, type StreamHubSettings } from './stream/stream-hub.js';
import type { OperationsContext, OperationsStore } from '../../operations/context.js';

export interface AdminApiParts {
  /** The configured admin token, or the one kept in the store. */
  token: AdminToken;
  store: OperationsStore;
  rules: RuleSetWatcher;
  dispatcher: () => Promise<Dispatcher>;
  guard: SsrfGuard;
  sources: readonly SourceConfig[];
  logger: Logger;
  sessions?: SessionVerifier;
  /** Counts wrong bearer tokens per client address. */
  limiter?: FailedAuthLimiter;
  /** `admin.streams` of the config. */
  streams: StreamHubSettings;
  /** `maxDepth` of the config: edited bodies are held to it as webhooks are. */
  maxDepth?: number;
  env: Env;
  destinations?: OperationsContext['destinations'];
  /** This node in the registry: its jobs carry its id, the cluster view marks it. */
  node: NewNode;
  /** This node's readiness with its checks (`GET /readiness`). */
  readiness?: OperationsContext['readiness'];
  /** The pinned contracts in force: a release checks the held body against them. */
  contracts?: OperationsContext['contracts'];
  /** This process's runtime record (`GET /node`). */
  runtime?: OperationsContext['runtime'];
}

export interface StartedAdminApi {
  /** The routes and their OpenAPI document, built on first use (most receivers never serve a request of it). */
  api(): Promise<AdminApi>;
  jobs: JobRunner;
  streams: StreamHub;
  token: AdminToken;
}

/** Everything the admin API needs at start: its token, the job runner (failing jobs a restart interrupted) and the stream hub; the router comes on first use. */
export async function startAdminApi(parts: AdminApiParts): Promise<StartedAdminApi> {
  const token = parts.token;
  const now = Date.now;
  const jobs = await JobRunner.start({ store: parts.store, rules: () => parts.rules.current(), env: parts.env, logger: parts.logger, now, nodeId: parts.node.id });
  const streams = new StreamHub(parts.streams);
  const build = async (): Promise<AdminApi> => (await import('./admin-api.js')).createAdminApi({
    context: {
      store: parts.store,
      rules: parts.rules,
      dispatcher: parts.dispatcher,
      guard: parts.guard,
      sources: new Map(parts.sources.map((source) => [source.name, source])),
      logger: parts.logger,
      now,
      env: parts.env,
      ...(parts.maxDepth !== undefined && { maxDepth: parts.maxDepth }),
      node: parts.node,
      ...(parts.readiness && { readiness: parts.readiness }),
      ...(parts.destinations && { destinations: parts.destinations }),
      ...(parts.contracts && { contracts: parts.contracts }),
      ...(parts.runtime && { runtime: parts.runtime }),
    },
    jobs,
    streams,
    token: token.token,
    ...(parts.sessions && { sessions: parts.sessions }),
    ...(parts.limiter && { limiter: parts.limiter }),
  });
  let api: Promise<AdminApi> | undefined;
  return { api: () => (api ??= build()), jobs, streams, token };
}
