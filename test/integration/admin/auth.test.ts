import { statSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { afterAll, afterEach, describe, expect, it, onTestFinished } from 'vitest';
import { createAdminApi } from '../../../src/admin/api/admin-api.js';
import type { SessionVerifier } from '../../../src/admin/api/auth.js';
import { errorHandler, notFoundHandler } from '../../../src/http/express-errors.js';
import { createLogger } from '../../../src/log.js';
import { send } from '../../helpers/http.js';
import { startTestReceiver } from '../../helpers/receiver.js';
import { makeTempDir, removeTempDirs } from '../../helpers/temp-dir.js';
import { closeAll, startAdminFixture } from './admin-fixture.js';

afterEach(closeAll);
afterAll(() => removeTempDirs());

describe('admin API authentication', () => {
  it('refuses a request without a token, and one with a wrong token, with 401 unauthorized', async () => {
    const { app, api } = await startAdminFixture();
    const missing = await send(`${app.url}/admin/api/events`);
    expect(missing.status).toBe(401);
    expect(missing.json.error.code).toBe('unauthorized');
    expect(missing.headers['www-authenticate']).toBe('Bearer');
    for (const authorization of ['Bearer wrong-token-0123456789', `Basic ${Buffer.from(`admin:${app.adminToken}`).toString('base64')}`, `Bearer ${app.adminToken}x`, 'Bearer']) {
      const wrong = await api('/events', { headers: { authorization } });
      expect(wrong.status, authorization).toBe(401);
      expect(wrong.json.error.code).toBe('unauthorized');
    }
  });

  it('answers with the right token; unknown admin paths are 404 only once authenticated', async () => {
    const { app, api } = await startAdminFixture();
    const ok = await api('/events');
    expect(ok.status).toBe(200);
    expect(ok.json).toEqual({ items: [], nextCursor: null });
    expect(ok.headers['cache-control']).toBe('no-store');
    expect((await api('/nothing-here')).status).toBe(404);
    expect((await send(`${app.url}/admin/api/nothing-here`)).status).toBe(401);
  });

  it('generates the token on first start into <dataDir>/admin.token (0600) and reuses it on the next start', async () => {
    const dataDir = makeTempDir();
    const first = await startTestReceiver({ dataDir });
    const generated = first.generatedAdminToken!;
    expect(generated.file).toBe(join(dataDir, 'admin.token'));
    expect(readFileSync(generated.file!, 'utf8').trim()).toBe(first.adminToken);
    expect(statSync(generated.file!).mode & 0o777).toBe(0o600);
    expect(first.adminToken.length).toBeGreaterThanOrEqual(40);
    await first.close();
    const second = await startTestReceiver({ dataDir });
    try {
      expect(second.generatedAdminToken).toBeNull();
      expect(second.adminToken).toBe(first.adminToken);
      expect((await send(`${second.url}/admin/api/jobs`, { headers: { authorization: `Bearer ${first.adminToken}` } })).status).toBe(200);
    } finally {
      await second.close();
    }
  });

  it('uses the configured token (HOOKRELAY_ADMIN_TOKEN) and writes no token file', async () => {
    const token = 'configured-admin-token-0123456789';
    const { app, api } = await startAdminFixture({ overrides: { admin: { token } } });
    expect(app.adminToken).toBe(token);
    expect(app.generatedAdminToken).toBeNull();
    expect(() => statSync(join(app.dataDir, 'admin.token'))).toThrow();
    expect((await api('/rules', { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
  });

  it('the ingest route never accepts the admin token in place of a signature', async () => {
    const { app, transfer } = await startAdminFixture();
    const body = JSON.stringify(transfer());
    const asBearer = await send(app.webhookUrl(), { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${app.adminToken}` }, body });
    expect(asBearer.status).toBe(401);
    expect(asBearer.json.error.code).toBe('missing_signature');
    const asSignature = await send(app.webhookUrl(), { method: 'POST', headers: { 'content-type': 'application/json', 'x-service-signature': app.adminToken }, body });
    expect(asSignature.status).toBe(401);
    expect(asSignature.json.error.code).toBe('invalid_signature');
    expect((await app.store.listEvents({}, { limit: 10 })).items).toEqual([]);
  });
});

describe('console sessions (SessionVerifier)', () => {
  // A stand-in for the console's session store: cookie "session=ok" is a live session, "X-CSRF-Token: good" passes.
  const sessions: SessionVerifier = {
    verifySession: async (req) => req.headers.cookie === 'session=ok',
    checkCsrf: async (req) => req.headers['x-csrf-token'] === 'good',
  };

  async function apiWithSessions(): Promise<string> {
    const { app } = await startAdminFixture();
    const adminApi = createAdminApi({
      context: { store: app.store, rules: app.rules, dispatcher: undefined as never, guard: undefined as never, sources: new Map(), logger: createLogger('silent'), now: Date.now, env: {} },
      jobs: app.adminJobs,
      streams: app.eventStreams,
      token: app.adminToken,
      sessions,
    });
    const server = express().use('/admin/api', adminApi.router).use(notFoundHandler).use(errorHandler(createLogger('silent'))).listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    onTestFinished(
      () =>
        new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        }),
    );
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}/admin/api`;
  }

  it('reads with a session cookie; mutations need the CSRF check too (403 forbidden without it)', async () => {
    const base = await apiWithSessions();
    expect((await send(`${base}/jobs`, { headers: { cookie: 'session=ok' } })).status).toBe(200);
    expect((await send(`${base}/jobs`, { headers: { cookie: 'session=expired' } })).status).toBe(401);
    const noCsrf = await send(`${base}/jobs/1/cancel`, { method: 'POST', headers: { cookie: 'session=ok' } });
    expect(noCsrf.status).toBe(403);
    expect(noCsrf.json.error.code).toBe('forbidden');
    const withCsrf = await send(`${base}/jobs/1/cancel`, { method: 'POST', headers: { cookie: 'session=ok', 'x-csrf-token': 'good' } });
    expect(withCsrf.status).toBe(404); // authenticated: the job just does not exist
  });

  it('a wrong bearer token is refused even next to a valid session cookie', async () => {
    const base = await apiWithSessions();
    const reply = await send(`${base}/jobs`, { headers: { cookie: 'session=ok', authorization: 'Bearer nope' } });
    expect(reply.status).toBe(401);
  });
});
