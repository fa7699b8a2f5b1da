import express, { Router } from 'express';
import { z } from 'zod';
import { VERSION } from '../../version.js';
import { buildOpenApiDocument, type OpenApiDocument } from '../openapi.js';
import { requireAdmin, type SessionVerifier } from './auth.js';
import type { FailedAuthLimiter } from '../failed-auth-limiter.js';
import type { OperationsContext } from '../../operations/context.js';
import type { JobRunner } from '../../operations/jobs/job-runner.js';
import { defineRoute, registerRoutes, type AdminRoute } from './route-table.js';
import { clusterRoutes } from './routes/cluster-routes.js';
import { deliveryRoutes } from './routes/delivery-routes.js';
import { destinationRoutes } from './routes/destination-routes.js';
import { eventRoutes } from './routes/event-routes.js';
import { explainRoutes } from './routes/explain-routes.js';
import { jobRoutes } from './routes/job-routes.js';
import { ruleRoutes } from './routes/rule-routes.js';
import { schemaRoutes } from './routes/schema-routes.js';
import { sourceRoutes } from './routes/source-routes.js';
import { streamRoutes } from './routes/stream-routes.js';
import type { StreamHub } from './stream/stream-hub.js';

export interface AdminApiOptions {
  context: OperationsContext;
  jobs: JobRunner;
  /** The open event streams. */
  streams: StreamHub;
  /** The admin token (bearer). */
  token: string;
  /** Console log-ins; without it only bearer tokens are accepted. */
  sessions?: SessionVerifier;
  /** Counts wrong bearer tokens per client address. */
  limiter?: FailedAuthLimiter;
}

export interface AdminApi {
  /** Mount at /admin/api. */
  router: Router;
  routes: readonly AdminRoute[];
  document: OpenApiDocument;
}

/** The admin API: one route table serves the requests and generates the OpenAPI document. */
export function createAdminApi(options: AdminApiOptions): AdminApi {
  const { context, jobs } = options;
  // The stream comes before /events/:id, which would take `stream` for an id.
  const routes: AdminRoute[] = [...streamRoutes(context, options.streams), ...eventRoutes(context, jobs), ...explainRoutes(context), ...deliveryRoutes(context, jobs), ...jobRoutes(context, jobs), ...ruleRoutes(context), ...destinationRoutes(context), ...clusterRoutes(context), ...schemaRoutes(context, jobs), ...sourceRoutes(context)];
  let document: OpenApiDocument;
  routes.push(
    defineRoute({
      method: 'get',
      path: '/openapi.json',
      operationId: 'getOpenApiDocument',
      summary: 'This API described as OpenAPI 3.1',
      success: { status: 200, description: 'the OpenAPI document', schema: z.record(z.string(), z.unknown()) },
      async handle() {
        return { status: 200, body: document };
      },
    }),
  );
  document = buildOpenApiDocument(routes, VERSION);

  const router = Router();
  router.use(requireAdmin(options.token, options.sessions, options.limiter));
  router.use((_req, res, next) => {
    res.set('Cache-Control', 'no-store'); // answers carry buyers' data
    next();
  });
  router.use(express.json({ limit: '1mb' }));
  registerRoutes(router, routes);
  return { router, routes, document };
}
