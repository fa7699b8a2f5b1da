import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { send, type Reply } from '../../helpers/http.js';
import { startTestReceiver, type TestReceiver } from '../../helpers/receiver.js';
import { removeTempDirs } from '../../helpers/temp-dir.js';

const ADMIN_TOKEN = 'auth-limit-admin-token-0123456789abcdef';
const METRICS_TOKEN = 'auth-limit-metrics-token-0123456789';
const running: TestReceiver[] = [];
afterEach(async () => {
  for (const app of running.splice(0)) await app.close();
});
afterAll(() => removeTempDirs());

async function receiver(server: Record<string, unknown> = {}): Promise<TestReceiver> {
  const app = await startTestReceiver({
    admin: { token: ADMIN_TOKEN, authFailures: { max: 5, windowMs: 60_000 } },
    metrics: { token: METRICS_TOKEN },
    server,
    delivery: { enabled: false },
    retention: { enabled: false },
  });
  running.push(app);
  return app;
}

const bearer = (app: TestReceiver, token: string, headers: Record<string, string> = {}): Promise<Reply> =>
  send(`${app.adminUrl}/admin/api/events`, { headers: { authorization: `Bearer ${token}`, ...headers } });

const login = (app: TestReceiver, token: string, json = true): Promise<Reply> =>
  send(`${app.adminUrl}/console/login`, json
    ? { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token }) }
    : { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `token=${encodeURIComponent(token)}` });

function expectLimited(reply: Reply): void {
  expect(reply.status).toBe(429);
  expect(Number(reply.headers['retry-after'])).toBeGreaterThan(0);
  expect(Number(reply.headers['retry-after'])).toBeLessThanOrEqual(60);
}

describe('failed authentication is rate-limited per client address', () => {
  it('answers 429 too_many_attempts with Retry-After after max wrong bearer tokens, then refuses even the right one from that address', async () => {
    const app = await receiver();
    for (let i = 0; i < 5; i++) expect((await bearer(app, `wrong-token-${i}-0123456789`)).status).toBe(401);
    const limited = await bearer(app, 'wrong-token-again-0123456789');
    expectLimited(limited);
    expect(limited.json.error.code).toBe('too_many_attempts');
    // Checking it would tell a right guess from a wrong one.
    expectLimited(await bearer(app, ADMIN_TOKEN));
  });

  it('never counts successful authentications', async () => {
    const app = await receiver();
    for (let i = 0; i < 30; i++) expect((await bearer(app, ADMIN_TOKEN)).status).toBe(200);
    for (let i = 0; i < 4; i++) expect((await bearer(app, 'wrong-token-0123456789')).status).toBe(401);
    expect((await bearer(app, ADMIN_TOKEN)).status).toBe(200);
  });

  it('counts wrong console log-ins and wrong metrics tokens in the same budget, and answers the log-in form with a page', async () => {
    const app = await receiver();
    for (let i = 0; i < 3; i++) expect((await login(app, `wrong-token-${i}-0123456789`)).status).toBe(401);
    for (let i = 0; i < 2; i++) expect((await send(`${app.adminUrl}/metrics`, { headers: { authorization: 'Bearer wrong-metrics-token' } })).status).toBe(401);
    const json = await login(app, 'wrong-token-x-0123456789');
    expectLimited(json);
    expect(json.json.error.code).toBe('too_many_attempts');
    const form = await login(app, ADMIN_TOKEN, false);
    expectLimited(form);
    expect(form.headers['content-type']).toMatch(/^text\/html/);
    expect(form.text).toContain('Too many wrong tokens');
    expectLimited(await send(`${app.adminUrl}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } }));
  });

  it('behind a trusted proxy, counts the client it names in X-Forwarded-For, so an operator is not locked out by an attacker', async () => {
    const app = await receiver({ trustProxy: ['127.0.0.1/32', '::1'] });
    const attacker = { 'x-forwarded-for': '203.0.113.5' };
    const operator = { 'x-forwarded-for': '198.51.100.7' };
    for (let i = 0; i < 5; i++) expect((await bearer(app, 'wrong-token-0123456789', attacker)).status).toBe(401);
    expectLimited(await bearer(app, 'wrong-token-0123456789', attacker));
    expect((await bearer(app, ADMIN_TOKEN, operator)).status).toBe(200);
    // A client cannot slip out by prepending addresses of its own: the nearest untrusted hop is the key.
    expectLimited(await bearer(app, 'wrong-token-0123456789', { 'x-forwarded-for': '192.0.2.99, 203.0.113.5' }));
  });

  it('ignores X-Forwarded-For from a peer that is not a trusted proxy', async () => {
    const app = await receiver();
    for (let i = 0; i < 5; i++) expect((await bearer(app, 'wrong-token-0123456789', { 'x-forwarded-for': `203.0.113.${i}` })).status).toBe(401);
    expectLimited(await bearer(app, ADMIN_TOKEN, { 'x-forwarded-for': '198.51.100.7' }));
  });
});
