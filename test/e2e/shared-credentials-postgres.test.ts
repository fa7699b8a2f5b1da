import { afterAll, beforeAll, expect, it } from 'vitest';
import { sampleTransferSucceeded } from '../../src/samples/transfer-succeeded.js';
import { runCli, startServeProcess, type CliProcess } from '../helpers/cli-process.js';
import { postSigned, send, type Reply } from '../helpers/http.js';
import { createTestDatabase, describeWithPostgres, type TestDatabase } from '../helpers/postgres.js';
import { makeTempDir, removeTempDirs } from '../helpers/temp-dir.js';

let database: TestDatabase;
afterAll(() => removeTempDirs());

/** The value printed on the line after `heading` in a serve process's stderr (the once-only notice). */
function printedAfter(stderr: string, heading: string): string {
  const lines = stderr.split('\n');
  const at = lines.findIndex((line) => line.includes(heading));
  expect(at, stderr).toBeGreaterThanOrEqual(0);
  return lines.slice(at + 1).find((line) => line.trim() !== '')!.trim();
}

function cookiesOf(reply: Reply): Record<string, string> {
  const header = reply.headers['set-cookie'];
  const list = Array.isArray(header) ? header : header ? [header] : [];
  return Object.fromEntries(list.map((cookie) => cookie.split(';')[0]!.split('=') as [string, string]));
}

describeWithPostgres('several nodes with nothing configured share the generated secret, admin token and console sessions', () => {
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(() => database.drop());

  it('a webhook signed with the secret node A shows is accepted by node B; token and console log-ins work on both', { timeout: 120_000 }, async () => {
    const env = { HOOKRELAY_DATABASE_URL: database.url, HOOKRELAY_RULES_DIR: makeTempDir() };
    const nodes: CliProcess[] = [];
    try {
      // No HOOKRELAY_SECRET, no HOOKRELAY_ADMIN_TOKEN; each node has a data dir of its own.
      const a = await startServeProcess({ ...env, HOOKRELAY_DATA_DIR: makeTempDir() });
      nodes.push(a);
      const b = await startServeProcess({ ...env, HOOKRELAY_DATA_DIR: makeTempDir() });
      nodes.push(b);
      const secret = printedAfter(a.stderr(), 'generated a signing secret for source "checkout"');
      const token = printedAfter(a.stderr(), 'generated an admin token');
      expect(a.stderr()).toContain('kept in the database for every node');
      // B found both in the database: it generated nothing, and neither value is in any log line.
      expect(b.stderr()).not.toContain('generated');
      for (const node of nodes) expect(node.stdout()).not.toContain(secret);
      for (const node of nodes) expect(node.stdout()).not.toContain(token);

      const accepted = await postSigned(`${b.url}/webhooks/checkout`, sampleTransferSucceeded(), secret);
      expect(accepted.status).toBe(200);
      expect((await postSigned(`${a.url}/webhooks/checkout`, sampleTransferSucceeded(), 'not-the-secret')).status).toBe(401);
      for (const node of [a, b]) {
        const events = await send(`${node.url}/admin/api/events`, { headers: { authorization: `Bearer ${token}` } });
        expect(events.status).toBe(200);
        expect(events.json.items.map((e: { id: number }) => e.id)).toEqual([accepted.json.id]);
      }

      // The CLI prints the same values from the database.
      const shown = runCli(['secrets', 'show'], { env });
      expect((await shown.exited).code).toBe(0);
      expect(shown.stdout().trim()).toBe(secret);
      const shownToken = runCli(['secrets', 'show', '--admin-token'], { env });
      expect((await shownToken.exited).code).toBe(0);
      expect(shownToken.stdout().trim()).toBe(token);
      // send-test signs with the generated secret, and remote mode finds the token, both from the database.
      const sent = runCli(['send-test', '--url', `${b.url}/webhooks/checkout`], { env });
      expect((await sent.exited).code, sent.stderr()).toBe(0);
      expect(sent.stdout()).toMatch(/^HTTP 200\n/);
      const listed = runCli(['events', 'list', '--url', a.url, '--json'], { env });
      expect((await listed.exited).code, listed.stderr()).toBe(0);
      expect(JSON.parse(listed.stdout()).items).toHaveLength(2);

      // A console log-in on A is valid on B; a log-out on A ends it on B.
      const login = await send(`${a.url}/console/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token }) });
      expect(login.status).toBe(200);
      const { hookrelay_session: session, hookrelay_csrf: csrf } = cookiesOf(login);
      const cookie = `hookrelay_session=${session}; hookrelay_csrf=${csrf}`;
      expect((await send(`${b.url}/admin/api/events`, { headers: { cookie } })).status).toBe(200);
      expect((await send(`${b.url}/console`, { headers: { cookie } })).status).toBe(200);
      const logout = await send(`${a.url}/console/logout`, { method: 'POST', headers: { cookie, 'x-csrf-token': csrf!, 'sec-fetch-site': 'same-origin' } });
      expect(logout.status).toBe(204);
      expect((await send(`${b.url}/admin/api/events`, { headers: { cookie } })).status).toBe(401);
      const console = await send(`${b.url}/console`, { headers: { cookie } });
      expect([console.status, console.headers.location]).toEqual([303, '/console/login']);
    } finally {
      for (const node of nodes) node.child.kill('SIGTERM');
      await Promise.all(nodes.map((node) => node.exited));
    }
  });
});
