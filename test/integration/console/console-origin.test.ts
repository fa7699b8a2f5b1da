import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { send, type Reply } from '../../helpers/http.js';
import { startTestReceiver, type TestReceiver } from '../../helpers/receiver.js';
import { removeTempDirs } from '../../helpers/temp-dir.js';

const ADMIN_TOKEN = 'console-origin-admin-token-0123456789';
const running: TestReceiver[] = [];
afterEach(async () => {
  for (const app of running.splice(0)) await app.close();
});
afterAll(() => removeTempDirs());

async function receiver(overrides: Record<string, unknown> = {}): Promise<TestReceiver> {
  const app = await startTestReceiver({ admin: { token: ADMIN_TOKEN }, delivery: { enabled: false }, retention: { enabled: false }, ...overrides });
  running.push(app);
  return app;
}

/** A console log-in as a browser on `origin` sends it, through a proxy that passes `host` on. */
const logInFrom = (app: TestReceiver, origin: string, headers: Record<string, string> = {}): Promise<Reply> =>
  send(`${app.url}/console/login`, { method: 'POST', headers: { 'content-type': 'application/json', origin, ...headers }, body: JSON.stringify({ token: ADMIN_TOKEN }) });

describe('console same-origin check: the scheme counts, not only the host', () => {
  it('behind a TLS proxy (publicUrl https://...), refuses Origin http:// with the public host and accepts the https origin', async () => {
    const app = await receiver({ publicUrl: 'https://hookrelay.example' });
    const host = { host: 'hookrelay.example' };
    const plain = await logInFrom(app, 'http://hookrelay.example', host);
    expect(plain.status).toBe(403);
    expect(plain.json.error.code).toBe('forbidden');
    expect((await logInFrom(app, 'https://hookrelay.example', host)).status).toBe(200);
    expect((await logInFrom(app, 'https://hookrelay.example:8443', host)).status).toBe(403);
    // Reached directly on its own address, the console keeps working over plain http.
    expect((await logInFrom(app, app.url)).status).toBe(200);
  });

  it('without publicUrl, expects the scheme the request came in by', async () => {
    const app = await receiver();
    const { host } = new URL(app.url);
    expect((await logInFrom(app, `https://${host}`)).status).toBe(403);
    expect((await logInFrom(app, `http://${host}`)).status).toBe(200);
    // X-Forwarded-Proto counts only from a trusted proxy.
    expect((await logInFrom(app, `https://${host}`, { 'x-forwarded-proto': 'https' })).status).toBe(403);
  });

  it('takes https from X-Forwarded-Proto when the proxy is trusted (server.trustProxy)', async () => {
    const app = await receiver({ server: { trustProxy: ['127.0.0.1'] } });
    const { host } = new URL(app.url);
    expect((await logInFrom(app, `https://${host}`, { 'x-forwarded-proto': 'https' })).status).toBe(200);
    expect((await logInFrom(app, `http://${host}`, { 'x-forwarded-proto': 'https' })).status).toBe(403);
  });
});
