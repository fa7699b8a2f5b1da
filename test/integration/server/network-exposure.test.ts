import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { sampleTransferSucceeded } from '../../../src/samples/transfer-succeeded.js';
import { isLoopbackHost } from '../../../src/http/server.js';
import { postSigned, send } from '../../helpers/http.js';
import { startTestReceiver, TEST_SECRET } from '../../helpers/receiver.js';
import { removeTempDirs } from '../../helpers/temp-dir.js';

afterAll(() => removeTempDirs());

const ADMIN_TOKEN = 'admin-token-0123456789abcdef';
const bearer = { authorization: `Bearer ${ADMIN_TOKEN}` };

describe('network exposure', () => {
  it('binds the webhook listener, with the admin API and console, to loopback unless told otherwise', async () => {
    const app = await startTestReceiver({ host: undefined, admin: { token: ADMIN_TOKEN } });
    try {
      expect((app.server.server.address() as AddressInfo).address).toBe('127.0.0.1');
      expect(app.server.adminServer).toBeNull();
      expect(app.adminUrl).toBe(app.url);
      expect((await send(`${app.adminUrl}/admin/api/events`, { headers: bearer })).status).toBe(200);
      expect(app.logLines().some((line) => line.level === 40 && String(line.msg).includes('share the webhook listener'))).toBe(false);
    } finally {
      await app.close();
    }
  });

  it('with admin.port, serves the admin API, console and metrics only on a loopback admin listener', async () => {
    const app = await startTestReceiver({ admin: { token: ADMIN_TOKEN, port: 0 } });
    try {
      const admin = app.server.adminServer!.address() as AddressInfo;
      expect(admin.address).toBe('127.0.0.1');
      expect(admin.port).not.toBe(app.port);
      expect(app.adminUrl).toBe(`http://127.0.0.1:${admin.port}`);

      // The webhook listener: webhooks and health checks, nothing of the admin surface.
      expect((await postSigned(app.webhookUrl(), sampleTransferSucceeded(), TEST_SECRET)).status).toBe(200);
      expect((await send(`${app.url}/healthz`)).status).toBe(200);
      for (const path of ['/admin/api/events', '/console', '/console/login', '/metrics']) {
        const reply = await send(`${app.url}${path}`, { headers: bearer });
        expect([path, reply.status, reply.json?.error?.code]).toEqual([path, 404, 'not_found']);
      }
      const index = await send(`${app.url}/`);
      expect(index.status).toBe(200);
      expect(index.json).toEqual({ service: 'hookrelay', webhooks: 'POST /webhooks/:source', health: '/healthz', ready: '/readyz' });

      // The admin listener: the admin surface, and no webhooks.
      const events = await send(`${app.adminUrl}/admin/api/events`, { headers: bearer });
      expect(events.status).toBe(200);
      expect(events.json.items).toHaveLength(1);
      expect((await send(`${app.adminUrl}/console/login`)).status).toBe(200);
      expect((await send(`${app.adminUrl}/metrics`)).status).toBe(200);
      expect((await send(`${app.adminUrl}/readyz`)).status).toBe(200);
      const webhook = await postSigned(`${app.adminUrl}/webhooks/checkout`, sampleTransferSucceeded(), TEST_SECRET);
      expect([webhook.status, webhook.json?.error?.code]).toEqual([404, 'not_found']);
    } finally {
      await app.close();
    }
    // Both listeners are closed.
    expect(app.server.server.listening).toBe(false);
    expect(app.server.adminServer!.listening).toBe(false);
  });

  it('warns at start when the admin surface shares a listener bound beyond loopback', async () => {
    const app = await startTestReceiver({ host: '0.0.0.0', admin: { token: ADMIN_TOKEN } });
    try {
      const warning = app.logLines().find((line) => line.level === 40 && String(line.msg).includes('share the webhook listener'));
      expect(warning).toMatchObject({ host: '0.0.0.0' });
      expect(String(warning?.msg)).toContain('HOOKRELAY_ADMIN_PORT');
    } finally {
      await app.close();
    }
  });

  it('warns at start when /metrics answers beyond loopback without a token, and only then', async () => {
    const metricsWarning = (app: { logLines: () => Record<string, unknown>[] }) =>
      app.logLines().find((line) => line.level === 40 && String(line.msg).includes('/metrics answers without a token'));
    const cases: [string, Record<string, unknown>, boolean][] = [
      ['shared listener on 0.0.0.0, no token', { host: '0.0.0.0' }, true],
      ['shared listener on 0.0.0.0 with a token', { host: '0.0.0.0', metrics: { token: 'metrics-token-0123456789' } }, false],
      ['webhooks on 0.0.0.0, admin listener on loopback', { host: '0.0.0.0', admin: { token: ADMIN_TOKEN, port: 0 } }, false],
      ['loopback', {}, false],
      ['metrics off', { host: '0.0.0.0', metrics: { enabled: false } }, false],
    ];
    for (const [what, overrides, warns] of cases) {
      const app = await startTestReceiver({ admin: { token: ADMIN_TOKEN }, ...overrides });
      try {
        const warning = metricsWarning(app);
        expect(Boolean(warning), what).toBe(warns);
        if (warns) {
          expect(warning).toMatchObject({ host: '0.0.0.0' });
          expect(String(warning?.msg)).toContain('HOOKRELAY_METRICS_TOKEN');
        }
      } finally {
        await app.close();
      }
    }
  });

  it.each([
    ['127.0.0.1', true],
    ['127.3.2.1', true],
    ['::1', true],
    ['[::1]', true],
    ['::ffff:127.0.0.1', true],
    ['localhost', true],
    ['0.0.0.0', false],
    ['::', false],
    ['10.0.0.5', false],
    ['example.internal', false],
  ])('isLoopbackHost(%s) is %s', (host, expected) => {
    expect(isLoopbackHost(host)).toBe(expected);
  });
});

describe('GET /', () => {
  it('sends a browser to the console where the console is served', async () => {
    const app = await startTestReceiver({ admin: { token: ADMIN_TOKEN } });
    try {
      const reply = await send(`${app.url}/`);
      expect(reply.status).toBe(302);
      expect(reply.headers.location).toBe('/console');
    } finally {
      await app.close();
    }
  });
});
