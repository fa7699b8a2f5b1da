import { z } from 'zod';
import { ErrorBodySchema } from '../operations/view-schemas.js';
import type { AdminRoute } from './api/route-table.js';

/**
 * The OpenAPI 3.1 document of the admin API, generated from the route table: the zod schemas that
 * validate each request (as JSON Schema 2020-12, the dialect OpenAPI 3.1 uses) and describe each answer.
 * Schemas with an `id` become shared components.
 */

type JsonObject = Record<string, unknown>;

export interface OpenApiDocument {
  openapi: '3.1.0';
  info: { title: string; version: string; description: string };
  servers: { url: string }[];
  security: Record<string, string[]>[];
  paths: Record<string, Record<string, JsonObject>>;
  components: { schemas: Record<string, JsonObject>; securitySchemes: Record<string, JsonObject> };
}

const COMPONENT_REF = '#/components/schemas/';

/** `$ref`s zod points at its local `$defs` are pointed at the document's components instead. */
function relinkRefs(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(relinkRefs);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, child]) => [
      key,
      key === '$ref' && typeof child === 'string' ? child.replace('#/$defs/', COMPONENT_REF) : relinkRefs(child),
    ]),
  );
}

class SchemaCollector {
  readonly components: Record<string, JsonObject> = {};

  toJson(schema: z.ZodType, io: 'input' | 'output'): JsonObject {
    // A schema with an `id` (even the root) lands in `$defs` and is referenced from there.
    const { $schema: _dialect, $defs, ...json } = z.toJSONSchema(schema, { target: 'draft-2020-12', io, unrepresentable: 'any' }) as JsonObject;
    for (const [name, definition] of Object.entries(($defs ?? {}) as Record<string, JsonObject>)) {
      this.components[name] = relinkRefs(definition) as JsonObject;
    }
    return relinkRefs(json) as JsonObject;
  }
}

function parameters(collector: SchemaCollector, schema: z.ZodType | undefined, where: 'path' | 'query'): JsonObject[] {
  if (!schema) return [];
  const json = collector.toJson(schema, 'input');
  const required = new Set((json.required ?? []) as string[]);
  return Object.entries((json.properties ?? {}) as Record<string, JsonObject>).map(([name, property]) => {
    const { description, ...propertySchema } = property;
    return {
      name,
      in: where,
      required: where === 'path' || required.has(name),
      ...(description !== undefined && { description }),
      schema: propertySchema,
    };
  });
}

function errorResponses(route: AdminRoute): Map<number, string[]> {
  const errors = new Map<number, string[]>();
  const add = (status: number, description: string): void => {
    errors.set(status, [...(errors.get(status) ?? []), description]);
  };
  add(401, 'no or wrong admin token (`unauthorized`)');
  add(429, 'too many wrong tokens from this client address (`too_many_attempts`, with `Retry-After`)');
  if (route.method !== 'get') add(403, 'console session without a valid CSRF token (`forbidden`)');
  if (route.params || route.query) add(400, 'invalid path or query parameter (`bad_request`, `details.issues`)');
  if (route.body) add(422, 'invalid body (`validation_failed`, `details.issues`)');
  for (const error of route.errors ?? []) add(error.status, error.description);
  return errors;
}

function operation(collector: SchemaCollector, route: AdminRoute): JsonObject {
  const responses: Record<string, JsonObject> = {
    [route.success.status]: { description: route.success.description, content: { [route.success.contentType ?? 'application/json']: { schema: collector.toJson(route.success.schema, 'output') } } },
  };
  const errorSchema = collector.toJson(ErrorBodySchema, 'output');
  for (const [status, descriptions] of [...errorResponses(route)].sort(([a], [b]) => a - b)) {
    responses[status] = { description: descriptions.join('; '), content: { 'application/json': { schema: errorSchema } } };
  }
  const params = [...parameters(collector, route.params, 'path'), ...parameters(collector, route.query, 'query')];
  return {
    operationId: route.operationId,
    summary: route.summary,
    ...(route.description !== undefined && { description: route.description }),
    ...(params.length > 0 && { parameters: params }),
    // A body whose every field is optional may be left out altogether.
    ...(route.body && { requestBody: { required: !route.body.safeParse({}).success, content: { 'application/json': { schema: collector.toJson(route.body, 'input') } } } }),
    responses,
  };
}

/** `/events/:id/replay` → `/events/{id}/replay`. */
export function openApiPath(expressPath: string): string {
  return expressPath.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

export function buildOpenApiDocument(routes: readonly AdminRoute[], version: string): OpenApiDocument {
  const collector = new SchemaCollector();
  const paths: OpenApiDocument['paths'] = {};
  for (const route of routes) {
    const path = openApiPath(route.path);
    paths[path] = { ...paths[path], [route.method]: operation(collector, route) };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'hookrelay admin API',
      version,
      description: 'Inspect stored webhooks and deliveries, replay, resend and retry them. See docs/admin-api.md.',
    },
    servers: [{ url: '/admin/api' }],
    security: [{ adminToken: [] }],
    paths,
    components: {
      schemas: collector.components,
      securitySchemes: { adminToken: { type: 'http', scheme: 'bearer', description: 'the admin token (HOOKRELAY_ADMIN_TOKEN or <dataDir>/admin.token)' } },
    },
  };
}
