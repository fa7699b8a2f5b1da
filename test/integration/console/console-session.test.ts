import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConsoleSessions } from '../../../src/admin/console/console-sessions.js';
import { sampleTransferSucceeded } from '../../../src/samples/transfer-succeeded.js';
import { postSigned, send } from '../../helpers/http.js';
import { TEST_SECRET, type TestReceiver } from '../../helpers/receiver.js';
import { SqliteStore } from '../../../src/store/sqlite/sqlite-store.js';
import { TestClock } from '../../contract/contract-helpers.js';
import { makeTempDir, removeTempDirs } from '../../helpers/temp-dir.js';
import { startWebhookSink, type WebhookSink } from '../../helpers/webhook-sink.js';
import { ADMIN_TOKEN, logIn, setCookies, startConsoleReceiver } from './console-harness.js';

let receiver: TestReceiver;
let sink: WebhookSink;
let eventId: number;

beforeAll(async () => {
  sink = await startWebhookSink();
  receiver = await startConsoleReceiver([{ id: 'fulfil', url: sink.url }]);
  const stored = await postSigned(receiver.webhookUrl(), sampleTransferSucceeded(), TEST_SECRET);
  eventId = stored.json.id ?? (await receiver.store.listEvents({}, { limit: 1 })).items[0]!.id;
});
afterAll(async () => {
  await receiver?.close();
  await sink?.close();
  removeTempDirs();
});

const json = { 'content-type': 'application/json' };

describe('console log-in', () => {
  it('sends to the log-in form without a session', async () => {
    const page = await send(`${receiver.url}/console`);
    expect(page.status).toBe(303);
    expect(page.headers.location).toBe('/console/login');
    const form = await send(`${receiver.url}/console/login`);
    expect(form.status).toBe(200);
    expect(form.text).toContain('action="/console/login"');
  });

  it('sets an HttpOnly SameSite=Strict session cookie and a readable csrf cookie', async () => {
    const reply = await send(`${receiver.url}/console/login`, { method: 'POST', headers: json, body: JSON.stringify({ token: ADMIN_TOKEN }) });
    expect(reply.status).toBe(200);
    const cookies = setCookies(reply);
    const session = cookies.get('hookrelay_session')!;
    const csrf = cookies.get('hookrelay_csrf')!;
    expect(session.value).toMatch(/^[\w-]{43}$/);
    expect(session.attributes).toEqual(expect.arrayContaining(['HttpOnly', 'SameSite=Strict', 'Path=/']));
    expect(csrf.value).toMatch(/^[\w-]{43}$/);
    expect(csrf.attributes).toEqual(expect.arrayContaining(['SameSite=Strict', 'Path=/']));
    expect(csrf.attributes).not.toContain('HttpOnly');
    // Neither cookie is the token.
    expect(reply.headers['set-cookie']!.toString()).not.toContain(ADMIN_TOKEN);
  });

  it('accepts the plain HTML form and redirects to the console', async () => {
    const reply = await send(`${receiver.url}/console/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: receiver.url, 'sec-fetch-site': 'same-origin' },
      body: `token=${encodeURIComponent(ADMIN_TOKEN)}`,
    });
    expect(reply.status).toBe(303);
    expect(reply.headers.location).toBe('/console');
    expect(setCookies(reply).has('hookrelay_session')).toBe(true);
  });

  it('refuses a wrong token with 401 and sets no cookie', async () => {
    const asJson = await send(`${receiver.url}/console/login`, { method: 'POST', headers: json, body: JSON.stringify({ token: `${ADMIN_TOKEN}x` }) });
    expect(asJson.status).toBe(401);
    expect(asJson.json.error.code).toBe('unauthorized');
    expect(asJson.headers['set-cookie']).toBeUndefined();
    const asForm = await send(`${receiver.url}/console/login`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'token=nope' });
    expect(asForm.status).toBe(401);
    expect(asForm.text).toContain('That is not the admin token.');
    expect(asForm.headers['set-cookie']).toBeUndefined();
  });

  it('refuses a log-in posted from another site', async () => {
    const reply = await send(`${receiver.url}/console/login`, {
      method: 'POST',
      headers: { ...json, origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' },
      body: JSON.stringify({ token: ADMIN_TOKEN }),
    });
    expect(reply.status).toBe(403);
    expect(reply.headers['set-cookie']).toBeUndefined();
  });

  it('serves the console and its assets with strict security headers', async () => {
    const { header } = await logIn(receiver.url);
    for (const path of ['/console', '/console/login', '/console/assets/app.js', '/console/assets/console.css']) {
      // The log-in form itself is what a visitor without a session gets (with one, it redirects).
      const reply = await send(`${receiver.url}${path}`, { headers: path === '/console/login' ? {} : { cookie: header } });
      expect(reply.status, path).toBe(200);
      const csp = String(reply.headers['content-security-policy']);
      expect(csp).toContain("default-src 'self'");
      expect(csp).toContain("script-src 'self'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).not.toContain('unsafe-inline');
      expect(reply.headers['x-content-type-options']).toBe('nosniff');
      expect(reply.headers['referrer-policy']).toBe('no-referrer');
    }
    const shell = await send(`${receiver.url}/console`, { headers: { cookie: header } });
    expect(shell.text).not.toMatch(/<script>|<script(?![^>]*\bsrc=)[^>]*>|\son\w+=/);
    expect(String((await send(`${receiver.url}/console/assets/app.js`)).headers['content-type'])).toMatch(/javascript/);
  });
});

describe('console assets', () => {
  it('answers 404 for a missing asset or a path outside the assets', async () => {
    expect((await send(`${receiver.url}/console/assets/missing.js`)).status).toBe(404);
    expect((await send(`${receiver.url}/console/assets/%2e%2e/console-router.ts`)).status).toBe(404);
    expect((await send(`${receiver.url}/console/assets/%2e%2e/console.html`)).status).toBe(404);
  });
});

describe('admin API from the console session', () => {
  it('reads with the session cookie alone', async () => {
    const { header } = await logIn(receiver.url);
    const reply = await send(`${receiver.url}/admin/api/events`, { headers: { cookie: header } });
    expect(reply.status).toBe(200);
    expect(reply.json.items.length).toBeGreaterThan(0);
  });

  it('refuses a mutation without the CSRF header, with a wrong one, or from another origin (403)', async () => {
    const { header, csrf } = await logIn(receiver.url);
    const replay = (headers: Record<string, string>) =>
      send(`${receiver.url}/admin/api/events/${eventId}/replay`, { method: 'POST', headers: { ...json, cookie: header, ...headers }, body: '{}' });

    expect((await replay({ origin: receiver.url })).status).toBe(403);
    expect((await replay({ origin: receiver.url, 'x-csrf-token': `${csrf}x` })).status).toBe(403);
    expect((await replay({ origin: 'https://evil.example', 'x-csrf-token': csrf })).status).toBe(403);
    expect((await replay({ 'sec-fetch-site': 'cross-site', 'x-csrf-token': csrf })).status).toBe(403);
    expect(sink.received.length).toBe(1);

    const accepted = await replay({ origin: receiver.url, 'sec-fetch-site': 'same-origin', 'x-csrf-token': csrf });
    expect(accepted.status).toBe(201);
    await sink.waitFor(2);
  });

  it('accepts the header-less Origin browsers send under no-referrer only with Sec-Fetch-Site: same-origin', async () => {
    const { header, csrf } = await logIn(receiver.url);
    const replay = (headers: Record<string, string>) =>
      send(`${receiver.url}/admin/api/events/${eventId}/replay`, { method: 'POST', headers: { ...json, cookie: header, 'x-csrf-token': csrf, ...headers }, body: '{}' });
    expect((await replay({ origin: 'null' })).status).toBe(403);
    expect((await replay({ origin: 'null', 'sec-fetch-site': 'same-origin' })).status).toBe(201);
  });
});

describe('console log-out', () => {
  it('needs the CSRF header, then ends the session and clears both cookies', async () => {
    const { header, csrf } = await logIn(receiver.url);
    const refused = await send(`${receiver.url}/console/logout`, { method: 'POST', headers: { cookie: header, origin: receiver.url } });
    expect(refused.status).toBe(403);

    const reply = await send(`${receiver.url}/console/logout`, { method: 'POST', headers: { cookie: header, origin: receiver.url, 'x-csrf-token': csrf } });
    expect(reply.status).toBe(204);
    const cleared = setCookies(reply);
    expect(cleared.get('hookrelay_session')?.value).toBe('');
    expect(cleared.get('hookrelay_csrf')?.value).toBe('');

    expect((await send(`${receiver.url}/admin/api/events`, { headers: { cookie: header } })).status).toBe(401);
    expect((await send(`${receiver.url}/console`, { headers: { cookie: header } })).status).toBe(303);
  });
});

describe('console sessions', () => {
  it('a new log-in from the same browser replaces its old session', async () => {
    const first = await logIn(receiver.url);
    const again = await send(`${receiver.url}/console/login`, { method: 'POST', headers: { ...json, cookie: first.header }, body: JSON.stringify({ token: ADMIN_TOKEN }) });
    expect(again.status).toBe(200);
    expect(setCookies(again).get('hookrelay_session')!.value).not.toBe(first.session);
    expect((await send(`${receiver.url}/admin/api/events`, { headers: { cookie: first.header } })).status).toBe(401);
  });


  it('expire after their lifetime, by the store clock', async () => {
    const clock = new TestClock();
    const store = new SqliteStore({ dataDir: makeTempDir(), durability: 'normal', clock });
    const sessions = new ConsoleSessions({ store, ttlMs: 60_000, clock });
    const cookies: string[] = [];
    const res = { cookie: (name: string, value: string) => cookies.push(`${name}=${value}`) } as never;
    await sessions.start({ secure: false, headers: {} } as never, res);
    const req = { headers: { cookie: cookies.join('; ') } } as never;
    expect(await sessions.verifySession(req)).toBe(true);
    clock.advance(60_001);
    expect(await sessions.verifySession(req)).toBe(false);
    await store.close();
  });

  it('are kept by the hash of their id: the store holds no cookie value', async () => {
    const { session } = await logIn(receiver.url);
    const idHash = createHash('sha256').update(session).digest('hex');
    expect(await receiver.store.getConsoleSession(session)).toBeNull();
    expect(await receiver.store.getConsoleSession(idHash)).toMatchObject({ idHash });
  });
});

describe('console scripts', () => {
  it('never write data as HTML', () => {
    const dir = fileURLToPath(new URL('../../../src/admin/console/assets/', import.meta.url));
    for (const name of readdirSync(dir).filter((file) => file.endsWith('.js'))) {
      const source = readFileSync(`${dir}${name}`, 'utf8');
      expect(source, name).not.toMatch(/\.innerHTML|\.outerHTML|insertAdjacentHTML|document\.write|eval\(|new Function/);
      expect(source, name).not.toMatch(/localStorage|sessionStorage/);
    }
  });
});
