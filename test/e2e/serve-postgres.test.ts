import { afterAll, beforeAll, expect, it } from 'vitest';
import { sampleTransferSucceeded } from '../../src/samples/transfer-succeeded.js';
import { startServeProcess } from '../helpers/cli-process.js';
import { postSigned, send } from '../helpers/http.js';
import { createTestDatabase, describeWithPostgres, type TestDatabase } from '../helpers/postgres.js';
import { makeTempDir, removeTempDirs } from '../helpers/temp-dir.js';

const SECRET = 'e2e-secret';
let database: TestDatabase;
afterAll(() => removeTempDirs());

describeWithPostgres('hookrelay serve on PostgreSQL', () => {
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(() => database.drop());

  it('stores in the database named by HOOKRELAY_DATABASE_URL, shared by two processes, and never logs the password', async () => {
    // The test server trusts loopback connections, so any password is accepted: it only has to stay out of the log.
    const url = new URL(database.url);
    url.password = 'pw-never-logged';
    const env = { HOOKRELAY_DATABASE_URL: url.toString(), HOOKRELAY_RULES_DIR: makeTempDir(), HOOKRELAY_SECRET: SECRET, HOOKRELAY_ADMIN_TOKEN: 'admin-token-0123456789abcdef' };
    const nodes = await Promise.all([startServeProcess({ ...env, HOOKRELAY_DATA_DIR: makeTempDir() }), startServeProcess({ ...env, HOOKRELAY_DATA_DIR: makeTempDir() })]);
    try {
      const opened = await nodes[0]!.waitForLog((line) => line.msg === 'store: PostgreSQL');
      expect(opened.database).toBe(url.toString().replace('pw-never-logged', '***'));
      const body = sampleTransferSucceeded();
      const replies = await Promise.all(nodes.map((node) => postSigned(`${node.url}/webhooks/checkout`, body, SECRET)));
      expect(replies.map((r) => r.status)).toEqual([200, 200]);
      expect(replies.map((r) => r.json.duplicate).sort()).toEqual([false, true]);
      // Either node shows the event the other stored.
      for (const node of nodes) {
        const reply = await send(`${node.url}/admin/api/events/${replies[0]!.json.id}`, { headers: { authorization: 'Bearer admin-token-0123456789abcdef' } });
        expect(reply.status).toBe(200);
      }
      expect((await database.query<{ n: number }>('SELECT count(*)::int AS n FROM events WHERE transfer_id = $1', [body.result.id]))[0]!.n).toBe(1);
      for (const node of nodes) expect(`${node.stdout()}${node.stderr()}`).not.toContain('pw-never-logged');
    } finally {
      for (const node of nodes) node.child.kill('SIGTERM');
      const exits = await Promise.all(nodes.map((node) => node.exited));
      expect(exits.map((e) => e.code)).toEqual([0, 0]);
    }
  });
});
