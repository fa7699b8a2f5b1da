import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createAdminApi } from '../../../src/admin/api/admin-api.js';
import { openApiPath } from '../../../src/admin/openapi.js';
import { createLogger } from '../../../src/log.js';
import { removeTempDirs } from '../../helpers/temp-dir.js';
import { closeAll, startAdminFixture, type AdminFixture } from './admin-fixture.js';

afterEach(closeAll);
afterAll(() => removeTempDirs());

interface RouteLayer {
  route?: { path: string; methods: Record<string, boolean> };
}

/** method + path of every handler express actually registered on the admin router (not the 405 catch-alls). */
function registeredRoutes(fixture: AdminFixture): string[] {
  const { app } = fixture;
  const api = createAdminApi({
    context: { store: app.store, rules: app.rules, dispatcher: undefined as never, guard: undefined as never, sources: new Map(), logger: createLogger('silent'), now: Date.now, env: {} },
    jobs: app.adminJobs,
    streams: app.eventStreams,
    token: app.adminToken,
  });
  return (api.router.stack as RouteLayer[])
    .filter((layer) => layer.route)
    .flatMap((layer) => Object.keys(layer.route!.methods).filter((m) => m !== '_all').map((m) => `${m} ${openApiPath(layer.route!.path)}`));
}

function collectRefs(value: unknown, refs: string[] = []): string[] {
  if (Array.isArray(value)) value.forEach((item) => collectRefs(item, refs));
  else if (value && typeof value === 'object') {
    for (const [key, child] of Object.entries(value)) {
      if (key === '$ref' && typeof child === 'string') refs.push(child);
      else collectRefs(child, refs);
    }
  }
  return refs;
}

describe('GET /admin/api/openapi.json', () => {
  it('documents every registered route, with its parameters, body and answers; every $ref resolves', async () => {
    const fixture = await startAdminFixture();
    const reply = await fixture.api('/openapi.json');
    expect(reply.status).toBe(200);
    const doc = reply.json;
    expect(doc).toMatchObject({ openapi: '3.1.0', info: { title: expect.any(String), version: expect.any(String) }, servers: [{ url: '/admin/api' }] });
    expect(doc.components.securitySchemes.adminToken).toEqual(expect.objectContaining({ type: 'http', scheme: 'bearer' }));

    const documented = Object.entries(doc.paths as Record<string, Record<string, unknown>>).flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m} ${path}`));
    const registered = registeredRoutes(fixture);
    expect(registered.length).toBeGreaterThanOrEqual(15);
    expect([...documented].sort()).toEqual([...registered].sort());

    for (const refs of collectRefs(doc)) {
      expect(doc.components.schemas[refs.replace('#/components/schemas/', '')], refs).toBeDefined();
    }
    const listEvents = doc.paths['/events'].get;
    expect(listEvents.parameters.map((p: { name: string }) => p.name)).toEqual(expect.arrayContaining(['event', 'email', 'transferId', 'deliveryState', 'limit', 'cursor']));
    expect(listEvents.parameters.find((p: { name: string }) => p.name === 'limit').schema).toMatchObject({ type: 'integer', minimum: 1, maximum: 500, default: 50 });
    expect(listEvents.responses['200'].content['application/json'].schema.properties.items.items).toEqual({ $ref: '#/components/schemas/EventListItem' });
    expect(doc.paths['/events/{id}/resend'].post.requestBody.content['application/json'].schema.properties.signing).toEqual({ $ref: '#/components/schemas/ResendSigning' });
    expect(doc.paths['/events/stream'].get.responses['200'].content['text/event-stream'].schema).toEqual({ $ref: '#/components/schemas/StreamedEvent' });
    expect(doc.paths['/events/{id}/replay'].post.parameters).toEqual([expect.objectContaining({ name: 'id', in: 'path', required: true })]);
    expect(Object.keys(doc.paths['/deliveries/{id}/retry'].post.responses).sort()).toEqual(['200', '400', '401', '403', '404', '409', '429']);
    expect(doc.components.schemas.Job.properties.state.enum).toEqual(['running', 'done', 'cancelled', 'failed']);
  });

  it('every request that violates its schema is refused: unknown body keys 422, unknown query keys 400, bad path ids 400', async () => {
    const fixture = await startAdminFixture();
    const doc = (await fixture.api('/openapi.json')).json;
    for (const [path, operations] of Object.entries(doc.paths as Record<string, Record<string, { requestBody?: unknown; parameters?: { in: string; name: string }[] }>>)) {
      for (const [method, op] of Object.entries(operations)) {
        const concrete = path.replace(/\{id\}/g, path.startsWith('/rules') ? 'a' : '1');
        if (op.requestBody) {
          const reply = await fixture.api(concrete, { method: method.toUpperCase(), body: { surely: 'not allowed' } });
          expect(reply.status, `${method} ${path}`).toBe(422);
          expect(reply.json.error.code).toBe('validation_failed');
        }
        if (op.parameters?.some((p) => p.in === 'query')) {
          const reply = await fixture.api(`${concrete}?surely=not`, { method: method.toUpperCase() });
          expect(reply.status, `${method} ${path}?surely`).toBe(400);
          expect(reply.json.error.details.issues[0].message).toContain('surely');
        }
        if (path.includes('{id}') && !path.startsWith('/rules')) {
          const reply = await fixture.api(path.replace('{id}', '-1'), { method: method.toUpperCase(), ...(op.requestBody ? { body: {} } : {}) });
          expect(reply.status, `${method} ${path} with id -1`).toBe(400);
        }
      }
    }
  });
});
