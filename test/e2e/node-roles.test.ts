import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { sampleTransferSucceeded } from '../../src/samples/transfer-succeeded.js';
import { runCli, startServeProcess, type CliProcess } from '../helpers/cli-process.js';
import { postSigned, send } from '../helpers/http.js';
import { createTestDatabase, describeWithPostgres, type TestDatabase } from '../helpers/postgres.js';
import { makeTempDir, removeTempDirs } from '../helpers/temp-dir.js';
import { startWebhookSink, type WebhookSink } from '../helpers/webhook-sink.js';

const SECRET = 'roles-secret';
const TOKEN = 'roles-admin-token-0123456789abcdef';
let database: TestDatabase;
let sink: WebhookSink;
afterAll(async () => {
  await sink?.close();
  removeTempDirs();
});

async function stop(node: CliProcess): Promise<number | null> {
  node.child.kill('SIGTERM');
  return (await node.exited).code;
}

describeWithPostgres('hookrelay serve --role, several processes on one PostgreSQL database', () => {
  beforeAll(async () => {
    [database, sink] = await Promise.all([createTestDatabase(), startWebhookSink()]);
  });
  afterAll(() => database?.drop());

  it('a receiver stores, a worker delivers what it stored and refuses webhooks; the cluster command lists both', async () => {
    const rulesDir = makeTempDir();
    writeFileSync(join(rulesDir, 'fwd.yaml'), `id: fwd\non: [transfer:succeeded]\nto:\n  url: ${sink.url}/in\n`);
    const env = {
      HOOKRELAY_DATABASE_URL: await database.freshSchemaUrl(), HOOKRELAY_RULES_DIR: rulesDir, HOOKRELAY_SECRET: SECRET, HOOKRELAY_ADMIN_TOKEN: TOKEN,
      HOOKRELAY_ALLOW_NETWORKS: '127.0.0.1/32', HOOKRELAY_LOG_LEVEL: 'info',
    };
    const receiver = await startServeProcess({ ...env, HOOKRELAY_DATA_DIR: makeTempDir() }, ['--role', 'receiver']);
    const worker = await startServeProcess({ ...env, HOOKRELAY_DATA_DIR: makeTempDir(), HOOKRELAY_ROLE: 'worker' });
    try {
      expect((await receiver.waitForLog((l) => l.msg === 'hookrelay listening')).role).toBe('receiver');
      expect((await worker.waitForLog((l) => l.msg === 'hookrelay listening')).role).toBe('worker');

      const refused = await postSigned(`${worker.url}/webhooks/checkout`, sampleTransferSucceeded(), SECRET);
      expect(refused.status).toBe(503);
      expect(refused.json.error.code).toBe('not_a_receiver');
      expect((await send(`${worker.url}/readyz`)).status).toBe(503);
      expect((await send(`${receiver.url}/readyz`)).status).toBe(200);

      const body = sampleTransferSucceeded();
      const stored = await postSigned(`${receiver.url}/webhooks/checkout`, body, SECRET);
      expect(stored.status).toBe(200);
      // Only the worker runs a delivery loop: it sends what the receiver stored.
      const [delivered] = await sink.waitFor(1, 15_000);
      expect(delivered!.headers['x-hookrelay-event-id']).toBe(String(stored.json.id));

      const cluster = runCli(['cluster', '--url', receiver.url, '--token', TOKEN, '--json']);
      expect((await cluster.exited).code).toBe(0);
      const view = JSON.parse(cluster.stdout());
      expect(view.nodes.map((n: { role: string; self: boolean }) => [n.role, n.self]).sort()).toEqual([['receiver', true], ['worker', false]]);
      expect(view.warnings).toEqual([]);
      const table = runCli(['cluster', '--url', worker.url, '--token', TOKEN]);
      expect((await table.exited).code).toBe(0);
      expect(table.stdout()).toMatch(/NODE +HOST +PID +ROLE/);
      expect(table.stdout()).toMatch(/ \* +\S+ +\d+ +worker /);

      // The worker stops cleanly: it leaves the cluster at once, and what the receiver stores now waits.
      expect(await stop(worker)).toBe(0);
      const after = runCli(['cluster', '--url', receiver.url, '--token', TOKEN, '--json']);
      await after.exited;
      expect(JSON.parse(after.stdout()).nodes.map((n: { role: string }) => n.role)).toEqual(['receiver']);
      const waiting = await postSigned(`${receiver.url}/webhooks/checkout`, sampleTransferSucceeded(), SECRET);
      expect(waiting.status).toBe(200);
      const pending = await send(`${receiver.url}/admin/api/deliveries?state=pending`, { headers: { authorization: `Bearer ${TOKEN}` } });
      expect(pending.json.items.map((d: { eventId: number }) => d.eventId)).toEqual([waiting.json.id]);
      // A node with role all picks it up.
      const all = await startServeProcess({ ...env, HOOKRELAY_DATA_DIR: makeTempDir() });
      try {
        await sink.waitFor(2, 15_000);
        expect(sink.received[1]!.headers['x-hookrelay-event-id']).toBe(String(waiting.json.id));
      } finally {
        expect(await stop(all)).toBe(0);
      }
    } finally {
      if (worker.child.exitCode === null) await stop(worker);
      expect(await stop(receiver)).toBe(0);
    }
  }, 180_000);
});

it('hookrelay cluster asks the serve process of the data dir (SQLite), and reads the data dir once it stopped', async () => {
  const dataDir = makeTempDir();
  const env = { HOOKRELAY_DATA_DIR: dataDir, HOOKRELAY_RULES_DIR: makeTempDir(), HOOKRELAY_SECRET: SECRET, HOOKRELAY_ADMIN_TOKEN: TOKEN };
  const node = await startServeProcess(env, ['--role', 'worker']);
  let nodeId = '';
  try {
    const listening = await node.waitForLog((l) => l.msg === 'hookrelay listening');
    nodeId = listening.nodeId;
    const local = runCli(['cluster', '--data-dir', dataDir, '--json'], { env });
    expect((await local.exited).code).toBe(0);
    const view = JSON.parse(local.stdout());
    // The running node answers (found by its runtime file in the data dir), so it is `self`.
    expect(view.nodes).toEqual([expect.objectContaining({ id: listening.nodeId, role: 'worker', self: true, pid: node.child.pid })]);
    const refused = await postSigned(`${node.url}/webhooks/checkout`, sampleTransferSucceeded(), SECRET);
    expect(refused.status).toBe(503);
  } finally {
    expect(await stop(node)).toBe(0);
  }
  const afterStop = runCli(['cluster', '--data-dir', dataDir], { env });
  expect((await afterStop.exited).code).toBe(0);
  expect(afterStop.stderr()).toContain('no running server found for this configuration');
  expect(afterStop.stdout()).toContain('no live nodes');
  // The node that stopped is not dropped without a word: it left, and the table says when.
  expect(afterStop.stdout()).toContain('gone in the last day:');
  expect(afterStop.stdout()).toMatch(new RegExp(`^${nodeId}\\s.*\\sworker\\s.*left \\d{4}-`, 'm'));
}, 120_000);
