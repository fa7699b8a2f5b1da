import type { ServerResponse } from 'node:http';
import type { Request, Router } from 'express';
import type { z } from 'zod';
import { HookrelayError } from '../../errors.js';
import { parseInput } from './parse-input.js';

/**
 * One entry per admin endpoint: its schemas, its documented answers and its handler. `registerRoutes`
 * mounts the table on an express router and `buildOpenApiDocument` describes the same table, so every
 * route that exists is documented and every documented schema is the one that validates.
 */

export type HttpMethod = 'get' | 'post';

export interface RouteAnswer {
  status: number;
  body: unknown;
}

/** An answer the route writes itself, over time (the event stream). */
export interface StreamAnswer {
  stream(res: ServerResponse): void;
}

export interface RouteInput<P, Q, B> {
  params: P;
  query: Q;
  body: B;
  req: Request;
}

export interface RouteSpec<P extends z.ZodType, Q extends z.ZodType, B extends z.ZodType> {
  method: HttpMethod;
  /** Express syntax under /admin/api, e.g. `/events/:id/replay`. */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  params?: P;
  query?: Q;
  body?: B;
  /** The success answer (error answers are documented for every route). */
  success: { status: number; description: string; schema: z.ZodType; contentType?: string };
  /** Error codes this route answers besides the ones every route can (401, 400/422 validation). */
  errors?: { status: number; description: string }[];
  handle(input: RouteInput<z.output<P>, z.output<Q>, z.output<B>>): Promise<RouteAnswer | StreamAnswer>;
}

/** A route with its types erased, as kept in the table. */
export type AdminRoute = RouteSpec<z.ZodType, z.ZodType, z.ZodType>;

/** Keeps the handler's input typed by the route's own schemas. */
export function defineRoute<P extends z.ZodType = z.ZodUndefined, Q extends z.ZodType = z.ZodUndefined, B extends z.ZodType = z.ZodUndefined>(
  spec: RouteSpec<P, Q, B>,
): AdminRoute {
  return spec as unknown as AdminRoute;
}

/** A body is needed only when the route has one; a request without any counts as `{}`. */
function bodyOf(req: Request): unknown {
  if (req.body !== undefined) return req.body;
  const length = req.headers['content-length'];
  const hasBody = (length !== undefined && length !== '0') || req.headers['transfer-encoding'] !== undefined;
  if (hasBody) throw new HookrelayError('unsupported_media_type', 'Send the body as JSON with Content-Type: application/json.');
  return {};
}

export function registerRoutes(router: Router, routes: readonly AdminRoute[]): void {
  for (const route of routes) {
    router[route.method](route.path, async (req, res) => {
      const params = route.params ? parseInput(route.params, req.params, 'path') : undefined;
      const query = route.query ? parseInput(route.query, req.query, 'query') : undefined;
      const body = route.body ? parseInput(route.body, bodyOf(req), 'body') : undefined;
      const answer = await route.handle({ params, query, body, req });
      if ('stream' in answer) answer.stream(res);
      else res.status(answer.status).json(answer.body);
    });
  }
  // A known path with another method is a 405 naming the allowed ones, not a 404.
  const methodsByPath = new Map<string, string[]>();
  for (const route of routes) methodsByPath.set(route.path, [...(methodsByPath.get(route.path) ?? []), route.method.toUpperCase()]);
  for (const [path, methods] of methodsByPath) {
    router.all(path, (req, res) => {
      res.set('Allow', methods.join(', '));
      throw new HookrelayError('method_not_allowed', `${req.method} is not allowed here; use ${methods.join(' or ')}.`);
    });
  }
}
