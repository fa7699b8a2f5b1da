import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestDatabase, describeWithPostgres, TEST_POOL, type TestDatabase } from '../../helpers/postgres.js';

const CONNECTION_MODULE = fileURLToPath(new URL('../../../dist/store/postgres/connection.js', import.meta.url));

// A process holding a pooled connection between two queries (inside a transaction) when the server ends it.
const HOLDER = `
import { openPool } from ${JSON.stringify(CONNECTION_MODULE)};
const pool = openPool(JSON.parse(process.argv[1]));
const client = await pool.connect();
const { rows } = await client.query('SELECT pg_backend_pid() AS pid');
console.log(JSON.stringify({ pid: rows[0].pid }));
for await (const _ of process.stdin); // the parent ends the connection, then closes stdin
const next = await client.query('SELECT 1').then(() => 'answered', (err) => err.message);
client.release();
const fresh = await pool.query('SELECT 2 AS two');
console.log(JSON.stringify({ next, fresh: fresh.rows[0].two }));
await pool.end();
`;

let database: TestDatabase;

describeWithPostgres('a pooled connection the server ends while it is checked out', () => {
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(() => database.drop());

  it('fails its next query instead of ending the process, and the pool goes on with a new connection', async () => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', HOLDER, JSON.stringify({ ...TEST_POOL, url: database.url })], { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    const exited = once(child, 'exit');
    while (!out.includes('\n')) {
      if (child.exitCode !== null) throw new Error(`the holder exited early: ${err}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const { pid } = JSON.parse(out.split('\n')[0]!) as { pid: number };
    const [{ ended }] = await database.query<{ ended: boolean }>('SELECT pg_terminate_backend($1) AS ended', [pid]);
    expect(ended).toBe(true);
    // The server's message reaches the idle connection before the holder asks anything more.
    await new Promise((resolve) => setTimeout(resolve, 300));
    child.stdin.end();
    const [code] = await exited;
    expect(err).not.toContain('terminating connection');
    expect(code, err).toBe(0);
    const result = JSON.parse(out.trim().split('\n').at(-1)!) as { next: string; fresh: number };
    expect(result.next).not.toBe('answered');
    expect(result.fresh).toBe(2);
  });
});
