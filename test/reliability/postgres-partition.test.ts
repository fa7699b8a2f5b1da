import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { request } from 'undici';
import { Writable } from 'node:stream';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { DeliveryThread } from '../../src/delivery/thread/delivery-thread.js';
import { createLogger } from '../../src/log.js';
import { RuleSetWatcher } from '../../src/rules/watcher.js';
import { clientConfig } from '../../src/store/postgres/connection.js';
import { NodeNotifications } from '../../src/store/postgres/notifications.js';
import { sampleTransferSucceeded } from '../../src/samples/transfer-succeeded.js';
import { signatureHeaders, newMessageId } from '../../src/signing/sign.js';
import { runCli, START_NODE_OPTIONS, startServeProcess, type CliProcess } from '../helpers/cli-process.js';
import { createTestDatabase, describeWithPostgres, TEST_DATABASE_URL, TEST_POOL, type TestDatabase } from '../helpers/postgres.js';
import { startTestReceiver, TEST_SECRET } from '../helpers/receiver.js';
import { eventually, rulesDirWith, TEST_DELIVERY } from '../helpers/rules.js';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js';
import { makeTempDir, removeTempDirs } from '../helpers/temp-dir.js';
import { startCountingSink } from './support/counting-sink.js';

// A network partition between a node and PostgreSQL: the proxy stops forwarding without a reset, so no
// error ever arrives and only the node's own deadlines can end a wait.

const SECRET = 'partition-secret';
const ADMIN_TOKEN = 'admin-token-0123456789abcdef';
/** database.commitTimeoutMs in these tests. */
const COMMIT_TIMEOUT_MS = 2_000;
/**
 * How long a client here waits for any answer: well past the deadline plus a second (a loaded machine),
 * far below the minute a partitioned database used to hold a webhook for.
 */
const CLIENT_PATIENCE_MS = 15_000;

const running: { close(): Promise<void> }[] = [];
let database: TestDatabase;
afterEach(async () => {
  for (const item of running.splice(0).reverse()) await item.close();
});
afterAll(() => removeTempDirs());

interface Answer {
  status: number;
  json: any;
}

/** A request that must be answered within `patienceMs`; a hung one rejects. */
async function ask(url: string, options: { method?: 'GET' | 'POST'; headers?: Record<string, string>; body?: Buffer } = {}, patienceMs = CLIENT_PATIENCE_MS): Promise<Answer> {
  const response = await request(url, { method: options.method ?? 'GET', headers: options.headers, body: options.body, signal: AbortSignal.timeout(patienceMs) });
  const text = await response.body.text();
  return { status: response.statusCode, json: text ? JSON.parse(text) : undefined };
}

function postEvent(baseUrl: string, patienceMs?: number): Promise<Answer & { transferId: string }> {
  const body = sampleTransferSucceeded();
  const raw = Buffer.from(JSON.stringify(body));
  const headers = { 'content-type': 'application/json', ...signatureHeaders({ scheme: 'hmac-sha256-hex', secret: SECRET }, { id: newMessageId(), timestamp: new Date(), body: raw }) };
  return ask(`${baseUrl}/webhooks/checkout`, { method: 'POST', headers, body: raw }, patienceMs).then((answer) => ({ ...answer, transferId: body.result.id }));
}

function serveEnv(configLines: string): Record<string, string> {
  const dir = makeTempDir();
  const file = join(dir, 'hookrelay.yaml');
  writeFileSync(file, configLines);
  return { HOOKRELAY_CONFIG: file, HOOKRELAY_RULES_DIR: makeTempDir(), HOOKRELAY_SECRET: SECRET, HOOKRELAY_ADMIN_TOKEN: ADMIN_TOKEN, HOOKRELAY_DATA_DIR: dir };
}

function databaseLines(url: string, extra = ''): string {
  return [
    'database:',
    `  url: ${url}`,
    '  poolSize: 4',
    `  commitTimeoutMs: ${COMMIT_TIMEOUT_MS}`,
    '  connectTimeoutMs: 2000',
    '  lockTimeoutMs: 2000',
    '  statementTimeoutMs: 5000',
    extra,
  ].join('\n');
}

const stopped = (proc: CliProcess) => ({
  close: async () => {
    if (proc.child.exitCode === null && proc.child.signalCode === null) proc.child.kill('SIGTERM');
    await proc.exited;
  },
});

const proxyToDatabase = async (): Promise<TcpProxy> => {
  const server = new URL(TEST_DATABASE_URL);
  const proxy = await startTcpProxy({ host: server.hostname, port: Number(server.port || 5432) });
  running.push(proxy);
  return proxy;
};

describeWithPostgres('PostgreSQL behind a network partition (no reset, no answer)', () => {
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(() => database.drop());

  it('answers webhooks 503 and /readyz 503 at once while partitioned, keeps running, and serves again once healed, losing nothing', async () => {
    const sink = await startCountingSink();
    running.push(sink);
    const proxy = await proxyToDatabase();
    const schemaUrl = await database.freshSchemaUrl();
    const env = serveEnv(`${databaseLines(proxy.urlFor(schemaUrl))}\ndelivery:\n  allowNetworks: [127.0.0.1/32]\n  pollIntervalMs: 100\n`);
    writeFileSync(join(env.HOOKRELAY_RULES_DIR!, 'all.yaml'), `id: all\non: [transfer:succeeded]\nto:\n  url: ${sink.url}\ntimeout: 2s\nretry:\n  schedule: [0s, 200ms, 500ms, 1s, 1s, 1s, 1s, 1s, 1s, 1s]\n`);
    const node = await startServeProcess(env);
    running.push(stopped(node));

    // Warm: every pool connection in use, so the partition catches queries on live connections too.
    const before = await Promise.all(Array.from({ length: 20 }, () => postEvent(node.url)));
    expect(before.map((a) => a.status)).toEqual(before.map(() => 200));
    expect((await ask(`${node.url}/readyz`)).status).toBe(200);

    proxy.blackhole();
    const during = await Promise.all(Array.from({ length: 10 }, () => postEvent(node.url)));
    for (const answer of during) {
      // Answered (not hung): the store's own 503, or a 200 for a commit that got through before the cut.
      if (answer.status !== 200) {
        expect(answer.status).toBe(503);
        expect(answer.json).toMatchObject({ error: { code: 'store_unavailable' } });
      }
    }
    expect(during.filter((a) => a.status === 503).length).toBeGreaterThan(0);
    // /readyz answers at once from what the node knows: each probe has a one-second patience here.
    await eventually(async () => (await ask(`${node.url}/readyz`, {}, 1_000)).status === 503, 10_000, '/readyz 503 during the partition');
    expect((await ask(`${node.url}/healthz`, {}, 1_000)).status).toBe(200);
    expect(node.child.exitCode).toBeNull();

    proxy.release();
    await eventually(async () => (await ask(`${node.url}/readyz`, {}, 1_000)).status === 200, 30_000, '/readyz 200 after the partition');
    const after = await Promise.all(Array.from({ length: 10 }, () => postEvent(node.url)));
    expect(after.map((a) => a.status)).toEqual(after.map(() => 200));
    expect(node.child.exitCode).toBeNull();

    // Nothing acknowledged is lost, and deliveries resume without a restart.
    const acknowledged = [...before, ...during, ...after].filter((a) => a.status === 200);
    const schema = new URL(schemaUrl).searchParams.get('options')!.replace('-c search_path=', '');
    const stored = await database.query<{ transfer_id: string }>(`SELECT transfer_id FROM ${schema}.events`);
    const storedIds = new Set(stored.map((row) => row.transfer_id));
    expect(acknowledged.filter((a) => !storedIds.has(a.transferId))).toEqual([]);
    await eventually(() => acknowledged.every((a) => sink.received.some((r) => r.body.toString().includes(a.transferId))), 30_000, 'every acknowledged event at the sink');

    node.child.kill('SIGTERM');
    expect((await node.exited).code).toBe(0);
  });

  it('answers 503 within the lock timeout plus a second while LOCK TABLE events is held, and /readyz turns 503 until it is released', async () => {
    const schemaUrl = await database.freshSchemaUrl();
    const app = await startTestReceiver({
      database: { ...TEST_POOL, url: schemaUrl, lockTimeoutMs: 2_000, commitTimeoutMs: 2_000 },
      rulesDir: rulesDirWith({}),
      delivery: TEST_DELIVERY,
      retention: { enabled: false },
    });
    running.push(app);
    const base = app.url;
    const post = async (patienceMs: number): Promise<Answer> => {
      const raw = Buffer.from(JSON.stringify(sampleTransferSucceeded()));
      const headers = { 'content-type': 'application/json', ...signatureHeaders({ scheme: 'hmac-sha256-hex', secret: TEST_SECRET }, { id: newMessageId(), timestamp: new Date(), body: raw }) };
      return ask(`${base}/webhooks/checkout`, { method: 'POST', headers, body: raw }, patienceMs);
    };
    expect((await post(CLIENT_PATIENCE_MS)).status).toBe(200);

    const locker = new pg.Client({ connectionString: schemaUrl });
    await locker.connect();
    try {
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE events IN ACCESS EXCLUSIVE MODE');
      // Two waves, the second while the first one's batch still waits for the lock: queueing behind it
      // must not add to its wait (patience: the lock timeout plus a second).
      const first = Array.from({ length: 20 }, () => post(3_000));
      await new Promise((resolve) => setTimeout(resolve, 500));
      const second = Array.from({ length: 20 }, () => post(3_000));
      const answers = await Promise.all([...first, ...second]);
      expect(answers.map((a) => a.status)).toEqual(answers.map(() => 503));
      expect(answers[0]!.json).toMatchObject({ error: { code: 'store_unavailable' } });
      expect((await ask(`${base}/readyz`, {}, 1_000)).status).toBe(503);
    } finally {
      await locker.query('ROLLBACK').catch(() => {});
      await locker.end();
    }
    await eventually(async () => (await ask(`${base}/readyz`, {}, 1_000)).status === 200, 15_000, '/readyz 200 once the lock is gone');
    expect((await post(CLIENT_PATIENCE_MS)).status).toBe(200);
  });

  it('at start, tries the store again while it cannot be reached, says why, and starts once it can', async () => {
    const proxy = await proxyToDatabase();
    proxy.blackhole();
    const env = serveEnv(databaseLines(proxy.urlFor(await database.freshSchemaUrl()), '  startupTimeoutMs: 120000'));
    const proc = runCli(['serve'], { env: { HOOKRELAY_HOST: '127.0.0.1', HOOKRELAY_PORT: '0', ...env }, nodeOptions: START_NODE_OPTIONS });
    running.push(stopped(proc));
    const retry = await proc.waitForLog((line) => line.msg === 'could not open the store; trying again', 30_000);
    expect(retry.reason).toMatch(/store/i);
    expect(proc.child.exitCode).toBeNull();
    proxy.release();
    const listening = await proc.waitForLog((line) => line.msg === 'hookrelay listening', 60_000);
    await eventually(async () => (await ask(`${listening.url}/readyz`, {}, 1_000)).status === 200, 15_000, '/readyz 200 once started');
  });

  it('gives up at start after database.startupTimeoutMs with a clear message', async () => {
    const proxy = await proxyToDatabase();
    proxy.blackhole();
    const env = serveEnv(databaseLines(proxy.urlFor(database.url), '  startupTimeoutMs: 1000'));
    const proc = runCli(['serve'], { env: { HOOKRELAY_HOST: '127.0.0.1', HOOKRELAY_PORT: '0', ...env }, nodeOptions: START_NODE_OPTIONS });
    running.push(stopped(proc));
    const exit = await proc.exited;
    expect(exit.code).toBe(1);
    expect(`${proc.stdout()}${proc.stderr()}`).toMatch(/Could not open the store within 1000 ms \(database\.startupTimeoutMs\)/);
  });

  it('a delivery thread that cannot reach the store at start leaves the node running, and starts once the database answers', async () => {
    const proxy = await proxyToDatabase();
    const config = loadConfig({}, {
      dataDir: makeTempDir(),
      database: { ...TEST_POOL, url: proxy.urlFor(await database.freshSchemaUrl()), connectTimeoutMs: 1_000 },
      delivery: TEST_DELIVERY,
    });
    const lines: string[] = [];
    const logger = createLogger('info', new Writable({ write(chunk, _enc, done) { lines.push(String(chunk)); done(); } }));
    const rules = await RuleSetWatcher.start({ dir: makeTempDir(), env: {}, logger: createLogger('silent') });
    running.push({ close: async () => rules.close() });
    proxy.blackhole();
    const thread = new DeliveryThread({ config, env: {}, rules, logger });
    await thread.start();
    running.push({ close: () => thread.stop(0) });
    expect(thread.state).toBe('restarting');
    await eventually(() => lines.filter((line) => line.includes('the delivery thread could not start; trying again')).length >= 2, 30_000, 'a failed restart, tried again');
    proxy.release();
    await eventually(() => thread.state === 'thread', 30_000, 'the thread started');
  });

  it('a listening connection cut off without a word is noticed by its ping, opened again once the database answers, and hears notifications', async () => {
    const proxy = await proxyToDatabase();
    const heard: string[] = [];
    const config = clientConfig({ ...TEST_POOL, url: proxy.urlFor(database.url) });
    const notifications = new NodeNotifications(config, 'this-node', new Map([['partition_test', () => heard.push('partition_test')]]), 200, { everyMs: 200, deadlineMs: 300 });
    running.push({ close: () => notifications.close() });
    await notifications.start();
    expect(notifications.listening).toBe(true);

    proxy.blackhole();
    await eventually(() => !notifications.listening, 10_000, 'the silent connection given up');
    proxy.release();
    await eventually(() => notifications.listening, 10_000, 'listening again');
    heard.length = 0;
    await database.query(`SELECT pg_notify('partition_test', 'another-node')`);
    await eventually(() => heard.length > 0, 10_000, 'a notification heard');
  });
});
