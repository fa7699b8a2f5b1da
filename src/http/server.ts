import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import express, { type Express } from 'express';
import ipaddr from 'ipaddr.js';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import { HookrelayError, toErrorBody } from '../errors.js';
import { logsRequest } from '../log.js';
import { errorHandler, notFoundHandler } from './express-errors.js';
import { sendError } from './send-json.js';
import { InFlightSet } from './in-flight-set.js';
import type { IngestHandler } from './ingest-route.js';

import type { ReadinessReport } from './readiness.js';

export type { ReadinessReport } from './readiness.js';

export interface ServerParts {
  config: Readonly<Config>;
  logger: Logger;
  ingest: IngestHandler;
  readiness: () => Promise<ReadinessReport>;
  /**
   * Mounts the admin surface (admin API, console, metrics) before the 404 handler: on the admin listener
   * when `admin.port` is set, on the webhook listener otherwise.
   */
  mountAdmin?: (app: Express) => void;
  /** Called for each connection closed unanswered because `server.maxConnections` were open (metrics). */
  onConnectionDropped?: () => void;
}

export interface RunningServer {
  /** The webhook listener. */
  server: Server;
  url: string;
  port: number;
  /** The separate admin listener, or null when the admin surface shares the webhook listener. */
  adminServer: Server | null;
  /** Base URL of the admin API, console and metrics (`url` when they share the webhook listener). */
  adminUrl: string;
  /** Stops accepting, lets in-flight requests finish (bounded by the grace period), then resolves. */
  close(): Promise<void>;
}

const WEBHOOK_PATH = /^\/webhooks\/([^/?#]+)\/?(?:\?.*)?$/;
const VALID_REQUEST_ID = /^[\w.:-]{1,128}$/;

function requestIdOf(req: IncomingMessage): string {
  const given = req.headers['x-request-id'];
  return typeof given === 'string' && VALID_REQUEST_ID.test(given) ? given : randomUUID();
}

/** True for addresses only this machine can reach (a name like `localhost` counts too). */
export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (bare === 'localhost') return true;
  if (!ipaddr.isValid(bare)) return false;
  const address = ipaddr.process(bare);
  return address.range() === 'loopback';
}

/** What `GET /` says on a listener without the console: where webhooks go, and the health checks. */
const WEBHOOK_INDEX = { service: 'hookrelay', webhooks: 'POST /webhooks/:source', health: '/healthz', ready: '/readyz' } as const;

function buildExpressApp(parts: ServerParts, surface: { webhooks: boolean; admin: boolean }): Express {
  const { config } = parts;
  const app = express();
  app.disable('x-powered-by');
  // req.ip is the connection's address unless it is a listed proxy: then the client that proxy names in
  // X-Forwarded-For (the failed-authentication limit counts per req.ip).
  app.set('trust proxy', config.server.trustProxy.length > 0 ? [...config.server.trustProxy] : false);
  app.use((req, res, next) => {
    const started = performance.now();
    const reqId = requestIdOf(req);
    res.setHeader('x-request-id', reqId);
    res.on('finish', () => {
      if (logsRequest(config.logRequests, res.statusCode)) parts.logger.info({ reqId, method: req.method, path: req.path, status: res.statusCode, durationMs: Math.round((performance.now() - started) * 100) / 100 }, 'request');
    });
    next();
  });
  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/readyz', async (_req, res) => {
    // Unauthenticated, so it says only ready or not; the checks behind it are GET /admin/api/readiness.
    const report = await parts.readiness();
    res.status(report.ready ? 200 : 503).json({ status: report.ready ? 'ready' : 'not_ready' });
  });
  // A browser pointed at the server lands on the console where it is served; elsewhere a short index.
  app.get('/', (_req, res) => {
    if (surface.admin && parts.mountAdmin) res.redirect(302, '/console');
    else res.json(WEBHOOK_INDEX);
  });
  if (surface.webhooks) {
    app.all(/^\/webhooks(\/.*)?$/, (req) => {
      throw new HookrelayError('method_not_allowed', `Webhooks are received with POST /webhooks/:source, not ${req.method} ${req.path}.`);
    });
  }
  if (surface.admin) parts.mountAdmin?.(app);
  app.use(notFoundHandler);
  app.use(errorHandler(parts.logger));
  return app;
}

/** One bound http.Server with its graceful close. */
interface Listener {
  server: Server;
  url: string;
  port: number;
  close(): Promise<void>;
}

async function listen(handler: RequestListener, parts: ServerParts, port: number, host: string): Promise<Listener> {
  const { config } = parts;
  let shuttingDown = false;
  const inFlight = new InFlightSet<ServerResponse>();
  const onRequest: RequestListener = (req, res) => {
    if (shuttingDown) res.setHeader('connection', 'close');
    res.once('close', inFlight.add(res));
    handler(req, res);
  };
  // A request pipelined behind an answer already under way (a stream) that stalls must not get a status
  // line of its own in the middle of that answer: the connection is closed instead, as Node itself does.
  const answering = (socket: Duplex): boolean => {
    for (const res of inFlight) if (res.socket === socket && res.headersSent) return true;
    return false;
  };
  // Node enforces headersTimeout/requestTimeout only when it sweeps its connections, every 30 s by default,
  // so a slow client could hold a socket up to 30 s longer than configured: sweep four times a second.
  const server = createServer({ connectionsCheckingInterval: 250 }, onRequest);
  // Requests Node refuses before any handler runs (bad framing, too-large headers, timeouts) still get the
  // common JSON error body instead of a bare status line.
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    if (!socket.writable || err.code === 'ECONNRESET' || answering(socket)) {
      socket.destroy();
      return;
    }
    const error =
      err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? new HookrelayError('request_timeout', 'The request was not received in time.')
        : err.code === 'HPE_HEADER_OVERFLOW'
          ? new HookrelayError('bad_request', 'The request headers are too large.')
          : new HookrelayError('bad_request', 'The request is not valid HTTP/1.1.');
    const body = JSON.stringify(toErrorBody(error));
    socket.end(`HTTP/1.1 ${error.status} ${error.status === 408 ? 'Request Timeout' : 'Bad Request'}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
  });
  // Slow or stalled clients are cut off instead of holding sockets and memory.
  server.headersTimeout = config.server.headersTimeoutMs;
  server.requestTimeout = config.server.requestTimeoutMs;
  server.keepAliveTimeout = config.server.keepAliveTimeoutMs;
  // Beyond it Node closes each new connection as soon as it is accepted: the client sees a reset.
  server.maxConnections = config.server.maxConnections;
  if (parts.onConnectionDropped) server.on('drop', parts.onConnectionDropped);

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const bound = (server.address() as AddressInfo).port;
  const displayHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;

  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= new Promise<void>((resolve) => {
      shuttingDown = true;
      // Requests already running get their answer, then their connection closes instead of idling.
      for (const res of inFlight) if (!res.headersSent) res.setHeader('connection', 'close');
      const idleSweep = setInterval(() => server.closeIdleConnections(), 50);
      const forceTimer = setTimeout(() => server.closeAllConnections(), config.server.shutdownGraceMs);
      forceTimer.unref();
      server.close(() => {
        clearTimeout(forceTimer);
        clearInterval(idleSweep);
        resolve();
      });
      server.closeIdleConnections();
    });
    return closing;
  };
  return { server, url: `http://${displayHost}:${bound}`, port: bound, close };
}

/**
 * The webhook listener: POST /webhooks/:source goes straight to the lean ingest handler (the hot path, no
 * framework per request); everything else is served by express. With `admin.port` set, the admin API,
 * console and metrics get a listener of their own (loopback by default) and the webhook listener serves
 * webhooks and health checks only.
 */
export async function startServer(parts: ServerParts): Promise<RunningServer> {
  const { config } = parts;
  const separateAdmin = config.admin.port !== undefined;
  const app = buildExpressApp(parts, { webhooks: true, admin: !separateAdmin });
  const webhooks = await listen(
    (req, res) => {
      const url = req.url ?? '/';
      if (req.method === 'POST' && url.startsWith('/webhooks/')) {
        const match = WEBHOOK_PATH.exec(url);
        if (match) {
          let source: string;
          try {
            source = decodeURIComponent(match[1]!);
          } catch {
            sendError(res, new HookrelayError('bad_request', 'The source name in the path is not valid percent-encoding.'), { connection: 'close' });
            return;
          }
          parts.ingest(req, res, source, requestIdOf(req));
          return;
        }
      }
      app(req, res);
    },
    parts,
    config.port,
    config.host,
  );
  let admin: Listener | null = null;
  if (separateAdmin) {
    const adminApp = buildExpressApp(parts, { webhooks: false, admin: true });
    try {
      admin = await listen(adminApp, parts, config.admin.port!, config.admin.host);
    } catch (err) {
      await webhooks.close();
      throw err;
    }
  }
  return {
    server: webhooks.server,
    url: webhooks.url,
    port: webhooks.port,
    adminServer: admin?.server ?? null,
    adminUrl: admin?.url ?? webhooks.url,
    close: async () => {
      await Promise.all([webhooks.close(), admin?.close()]);
    },
  };
}
