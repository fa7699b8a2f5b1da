import { randomBytes } from 'node:crypto';
import express, { type Express, type Request } from 'express';
import { Agent, fetch as undiciFetch, type Dispatcher } from 'undici';
import { HookrelayError } from '../errors.js';
import { createLogger, type Logger } from '../log.js';
import { createCheckoutService } from './checkout-service.js';
import type { MockContext } from './context.js';
import { requireBearer } from './http/bearer-auth.js';
import { createSessionStore } from './http/dashboard-session.js';
import { createErrorHandler, notFoundFallback } from './http/error-handler.js';
import { pageHeaders } from './http/page-headers.js';
import { logRequests } from './http/request-log.js';
import { listenOn, type MockCheckoutServer } from './listen.js';
import { createPurchaseService } from './purchase-service.js';
import { createApiRouter } from './routes/api-routes.js';
import { createAutomationRouter } from './routes/automation-routes.js';
import { createBuyerRouter } from './routes/buyer-routes.js';
import { createDashboardRouter } from './routes/dashboard-routes.js';
import { createMemoryRepository } from './store/memory-repository.js';
import type { MockRepository } from './store/repository.js';
import { createSqliteRepository } from './store/sqlite-repository.js';
import { createMonotonicClock } from './timestamps.js';
import { createWebhookDispatcher } from './webhook-dispatch.js';
import type { FetchLike, RetryPolicy } from './webhook-sender.js';

export interface MockCheckoutOptions {
  /** Bearer key for the API, automation hooks and dashboard log-in; generated when absent (see `apiKey`). */
  apiKey?: string;
  /** Webhook secret for checkouts created without one; absent: a random secret per checkout. */
  webhookSecret?: string;
  /** SQLite file that keeps checkouts, transfers and deliveries across restarts; absent: in memory. */
  db?: string;
  /** Base of the links handed out (checkoutUrl); absent: the address `listen` bound, else the request's Host. */
  publicUrl?: string;
  logger?: Logger;
  /** Sends the webhooks; absent: undici's fetch through `dispatcher` (or a private agent). */
  fetch?: FetchLike;
  dispatcher?: Dispatcher;
  /** Short in-process retries of a failed delivery (network error, time-out, 5xx). Default 3 retries from 250 ms. */
  retry?: Partial<RetryPolicy>;
  /** Per-attempt time-out of a webhook POST. Default 5000 ms. */
  webhookTimeoutMs?: number;
  /** Allow webhook URLs that are not loopback (localhost, 127.0.0.0/8, [::1]). Default false. */
  allowRemoteWebhooks?: boolean;
}

export interface MockCheckout {
  app: Express;
  /** The key in force (the given one or the generated one). */
  apiKey: string;
  /** Direct read access to stored checkouts, transfers and deliveries, for tests. */
  state: MockRepository;
  listen(port?: number, host?: string): Promise<MockCheckoutServer>;
  /** Releases the database and the HTTP agent; `listen(...).close()` calls it too. */
  close(): Promise<void>;
}

export const DEFAULT_RETRY: RetryPolicy = { retries: 3, minTimeout: 250 };

/** Builds the mock checkout service: API, buyer page, dashboard, automation hooks and webhook sender. */
export function createMockCheckout(options: MockCheckoutOptions = {}): MockCheckout {
  if (options.apiKey !== undefined && options.apiKey.trim() === '') {
    throw new HookrelayError('invalid_config', 'apiKey must not be empty');
  }
  const apiKey = options.apiKey ?? `mock_${randomBytes(24).toString('base64url')}`;
  const configuredPublicUrl = normalisePublicUrl(options.publicUrl);
  const logger = options.logger ?? createLogger('warn');
  const repository = options.db ? createSqliteRepository(options.db) : createMemoryRepository();
  const ownAgent = options.fetch || options.dispatcher ? undefined : new Agent({ connect: { timeout: 5000 } });
  const dispatcher = options.dispatcher ?? ownAgent;
  const fetchLike: FetchLike = options.fetch ?? ((url, init) => undiciFetch(url, { ...init, dispatcher }));
  const allowRemoteWebhooks = options.allowRemoteWebhooks ?? false;
  const clock = createMonotonicClock();
  let boundUrl: string | undefined;

  const deliver = createWebhookDispatcher({
    repository,
    allowRemoteWebhooks,
    fetch: fetchLike,
    retry: { ...DEFAULT_RETRY, ...options.retry },
    timeoutMs: options.webhookTimeoutMs ?? 5000,
    logger,
    now: clock,
  });
  const ctx: MockContext = {
    apiKey,
    repository,
    checkouts: createCheckoutService({ repository, defaultWebhookSecret: options.webhookSecret, allowRemoteWebhooks, now: clock }),
    purchases: createPurchaseService({ repository, clock, deliver }),
    sessions: createSessionStore(),
    publicUrl: (req: Request) => configuredPublicUrl ?? boundUrl ?? `${req.protocol}://${req.get('host') ?? 'localhost'}`,
  };

  const app = express();
  app.disable('x-powered-by');
  app.use(logRequests(logger), pageHeaders);
  // Auth runs before the body parser, so unauthenticated bodies are never parsed.
  app.use('/api/v1', requireBearer(apiKey), express.json({ limit: '100kb' }), createApiRouter(ctx));
  app.use('/mock', requireBearer(apiKey), express.json({ limit: '100kb' }), createAutomationRouter(ctx));
  const forms = express.urlencoded({ extended: false, limit: '64kb' });
  app.use('/dashboard', forms, createDashboardRouter(ctx));
  app.use(forms, createBuyerRouter(ctx));
  app.get('/', (_req, res) => res.redirect(303, '/dashboard'));
  app.use(notFoundFallback);
  app.use(createErrorHandler(logger));

  let closed: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closed ??= (async () => {
      repository.close();
      await ownAgent?.close();
    })();
    return closed;
  };

  return {
    app,
    apiKey,
    state: repository,
    close,
    async listen(port = 0, host = '127.0.0.1') {
      const server: MockCheckoutServer = await listenOn(app, port, host, close);
      // A wildcard address is no use in a link; then the request's Host header says how we were reached.
      if (!/^http:\/\/(0\.0\.0\.0|\[::\]):/.test(server.url)) boundUrl ??= server.url;
      logger.info({ url: server.url }, 'mock checkout listening');
      return server;
    },
  };
}

function normalisePublicUrl(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (!URL.canParse(value) || !/^https?:$/.test(new URL(value).protocol)) {
    throw new HookrelayError('invalid_config', `publicUrl must be an http(s) URL, got "${value}"`);
  }
  return value.replace(/\/+$/, '');
}

