import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from '../../src/sqlite-driver.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, startServeProcess } from '../helpers/cli-process.js';
import { createTestDatabase, describeWithPostgres, type TestDatabase } from '../helpers/postgres.js';
import { rulesDirWith } from '../helpers/rules.js';
import { makeTempDir, removeTempDirs } from '../helpers/temp-dir.js';
import { startWebhookSink } from '../helpers/webhook-sink.js';
import { sampleTransferSucceeded } from '../../src/samples/transfer-succeeded.js';

afterAll(() => removeTempDirs());

const SERVER_SECRET = 'mock-shared-secret';
const ADMIN_TOKEN = 'cli-truth-admin-token-0123456789';

async function hookrelay(args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const proc = runCli(args, { env });
  const { code } = await proc.exited;
  return { code, stdout: proc.stdout(), stderr: proc.stderr() };
}

describe('the CLI answers with the running server, found by its runtime file', { timeout: 120_000 }, () => {
  it("signs with the server's secret, judges with its allow-list, and says when it works offline", async () => {
    const sink = await startWebhookSink();
    const dataDir = makeTempDir();
    const rulesDir = rulesDirWith({ 'local.yaml': `id: local\non: [transfer:succeeded]\nto:\n  url: ${sink.url}\n` });
    // The server alone has the secret and the allow-list, as after docs/mock-checkout.md's export in its own terminal.
    const server = await startServeProcess({
      HOOKRELAY_DATA_DIR: dataDir,
      HOOKRELAY_RULES_DIR: rulesDir,
      HOOKRELAY_SECRET: SERVER_SECRET,
      HOOKRELAY_ALLOW_NETWORKS: '127.0.0.1/32',
    });
    // Another terminal: the same data dir, nothing else.
    const terminal = { HOOKRELAY_DATA_DIR: dataDir, HOOKRELAY_RULES_DIR: rulesDir };
    try {
      const runtimeText = readFileSync(join(dataDir, 'hookrelay.runtime.json'), 'utf8');
      const runtime = JSON.parse(runtimeText);
      expect(runtime).toMatchObject({ url: server.url, pid: server.child.pid, store: { kind: 'sqlite', location: join(dataDir, 'hookrelay.db') } });
      expect(runtime.delivery).toEqual({ allowNetworks: ['127.0.0.1/32'], allowNetworksFrom: 'HOOKRELAY_ALLOW_NETWORKS' });
      // Where secrets come from, never the secrets.
      expect(runtimeText).not.toContain(SERVER_SECRET);
      expect(runtimeText).not.toContain(readFileSync(join(dataDir, 'admin.token'), 'utf8').trim());

      const sent = await hookrelay(['send-test'], terminal);
      expect(sent.code, sent.stderr).toBe(0);
      expect(sent.stdout).toMatch(/^HTTP 200/);
      expect(sent.stderr).toContain(`POST ${server.url}/webhooks/checkout`);
      await sink.waitFor(1);

      const shown = await hookrelay(['secrets', 'show'], terminal);
      expect(shown.code, shown.stderr).toBe(0);
      expect(shown.stdout).toBe(`${SERVER_SECRET}\n`);
      expect(shown.stderr).toContain('HOOKRELAY_SECRET in the environment of hookrelay serve');

      // A wrong secret: the answer stays generic, the CLI and the server's log say which secret is checked.
      const wrong = await hookrelay(['send-test', '--secret', 'not-the-secret'], terminal);
      expect(wrong.code).toBe(1);
      expect(wrong.stdout).toMatch(/^HTTP 401/);
      expect(wrong.stdout).not.toContain('HOOKRELAY_SECRET');
      expect(wrong.stderr).toContain('hint: the server refused the signature: this request was signed with the secret from --secret');
      expect(wrong.stderr).toContain('verifies source "checkout" with the secret from HOOKRELAY_SECRET in the environment of hookrelay serve');
      const logged = await server.waitForLog((line) => line.msg === 'ingest' && line.status === 401);
      expect(logged.secretFrom).toBe('HOOKRELAY_SECRET in the environment of hookrelay serve');

      const checked = await hookrelay(['rules', 'check'], terminal);
      expect(checked.code, checked.stderr).toBe(0);
      expect(checked.stdout).toMatch(/^1 rule\(s\) OK/);
      expect(checked.stderr).toContain(`judged with the settings of the running server at ${server.url}`);

      const listed = await hookrelay(['events', 'list', '--json'], terminal);
      expect(listed.code, listed.stderr).toBe(0);
      const eventId = JSON.parse(listed.stdout).items[0].id as number;
      expect(listed.stderr).toBe('');

      const explained = await hookrelay(['events', 'explain', String(eventId), '--json'], terminal);
      expect(explained.code, explained.stderr).toBe(0);
      expect(JSON.parse(explained.stdout).rules[0].destination).toMatchObject({ checked: true, allowed: true });

      const bodyFile = join(makeTempDir(), 'body.json');
      writeFileSync(bodyFile, JSON.stringify(sampleTransferSucceeded()));
      const explainedFile = await hookrelay(['events', 'explain', '--file', bodyFile, '--json'], terminal);
      expect(explainedFile.code, explainedFile.stderr).toBe(0);
      expect(JSON.parse(explainedFile.stdout).rules[0].destination).toMatchObject({ checked: true, allowed: true });
      expect(explainedFile.stderr).toContain('judged with the settings of the running server');
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
      await sink.close();
    }

    // A clean stop removes the file: commands now read the store directly and judge offline, and say so.
    expect(existsSync(join(dataDir, 'hookrelay.runtime.json'))).toBe(false);
    const offline = await hookrelay(['events', 'list', '--json'], terminal);
    expect(offline.code, offline.stderr).toBe(0);
    expect(JSON.parse(offline.stdout).items).toHaveLength(1);
    expect(offline.stderr).toBe(`no running server found for this configuration (no live ${join(dataDir, 'hookrelay.runtime.json')}); reading the SQLite database ${join(dataDir, 'hookrelay.db')} directly\n`);

    const refused = await hookrelay(['rules', 'check'], terminal);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toMatch(/^1 rule\(s\) valid .*; 1 destination\(s\) refused by this terminal's settings \(offline\)/);
    expect(refused.stderr).toContain('to allow it, add 127.0.0.1/32 (or its network) to HOOKRELAY_ALLOW_NETWORKS (delivery.allowNetworks)');
    expect(refused.stderr).toContain("judged offline with this terminal's settings: delivery.allowNetworks [], from unset");

    // A file left by a crash (its pid gone) is stale: ignored.
    writeFileSync(join(dataDir, 'hookrelay.runtime.json'), readRuntimeLike(server.url));
    const stale = await hookrelay(['events', 'list'], terminal);
    expect(stale.code, stale.stderr).toBe(0);
    expect(stale.stderr).toContain('no running server found for this configuration');
  });
});

/** A runtime file whose process is gone: pid 2^22 + 1 is above Linux's pid_max. */
function readRuntimeLike(url: string): string {
  return JSON.stringify({
    url,
    adminUrl: url,
    pid: 4_194_305,
    nodeId: 'node_gone',
    version: '0.0.0',
    startedAt: new Date(0).toISOString(),
    store: { kind: 'sqlite', location: '/nowhere/hookrelay.db' },
    delivery: { allowNetworks: [], allowNetworksFrom: 'unset' },
    adminTokenFrom: 'generated',
    sources: [],
  });
}

describeWithPostgres('moved to PostgreSQL, an abandoned SQLite file in the data dir', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(() => database.drop());

  it('lists, retries and shows the cluster from PostgreSQL only, and reads PostgreSQL directly once the server stops', { timeout: 180_000 }, async () => {
    const sink = await startWebhookSink();
    const dataDir = makeTempDir();
    const rulesDir = rulesDirWith({ 'local.yaml': `id: local\non: [transfer:succeeded]\nto:\n  url: ${sink.url}\n` });
    const base = { HOOKRELAY_DATA_DIR: dataDir, HOOKRELAY_RULES_DIR: rulesDir, HOOKRELAY_SECRET: SERVER_SECRET, HOOKRELAY_ALLOW_NETWORKS: '127.0.0.1/32' };
    // First on SQLite: two events, then the server stops; the file stays behind.
    const sqliteServer = await startServeProcess(base);
    for (let i = 0; i < 2; i += 1) expect((await hookrelay(['send-test'], { HOOKRELAY_DATA_DIR: dataDir })).code).toBe(0);
    await sink.waitFor(2);
    sqliteServer.child.kill('SIGTERM');
    await sqliteServer.exited;
    const sqlite = new Database(join(dataDir, 'hookrelay.db'), { readonly: true });
    const sqliteAttempts = (): number => (sqlite.prepare('SELECT count(*) AS n FROM delivery_attempts').get() as { n: number }).n;
    const attemptsBefore = sqliteAttempts();

    const pg = { ...base, HOOKRELAY_DATABASE_URL: database.url, HOOKRELAY_ADMIN_TOKEN: ADMIN_TOKEN };
    const server = await startServeProcess(pg);
    // The user's terminal after `export HOOKRELAY_DATABASE_URL=...`: no secret, no allow-list.
    const terminal = { HOOKRELAY_DATA_DIR: dataDir, HOOKRELAY_DATABASE_URL: database.url, HOOKRELAY_ADMIN_TOKEN: ADMIN_TOKEN };
    try {
      for (let i = 0; i < 3; i += 1) expect((await hookrelay(['send-test'], terminal)).code).toBe(0);
      await sink.waitFor(5);

      const listed = await hookrelay(['events', 'list', '--json'], terminal);
      expect(listed.code, listed.stderr).toBe(0);
      expect(JSON.parse(listed.stdout).items).toHaveLength(3);

      // A terminal that still names the SQLite file is sent to the server, and told so.
      const stale = await hookrelay(['events', 'list', '--json'], { HOOKRELAY_DATA_DIR: dataDir, HOOKRELAY_ADMIN_TOKEN: ADMIN_TOKEN });
      expect(stale.code, stale.stderr).toBe(0);
      expect(JSON.parse(stale.stdout).items).toHaveLength(3);
      expect(stale.stderr).toContain(`uses PostgreSQL at ${new URL(database.url).hostname}:5432/${database.name}, not the SQLite database ${join(dataDir, 'hookrelay.db')}`);
      const imported = await hookrelay(['events', 'import', '-'], { HOOKRELAY_DATA_DIR: dataDir });
      expect(imported.code).not.toBe(0);
      expect(imported.stderr).toContain("run with the server's settings");

      const deliveries = await hookrelay(['deliveries', 'list', '--json'], terminal);
      const deliveryId = JSON.parse(deliveries.stdout).items[0].id as number;
      const retried = await hookrelay(['deliveries', 'retry', String(deliveryId), '--json'], terminal);
      expect(retried.code, retried.stderr).toBe(0);
      await sink.waitFor(6);
      const pgAttempts = await database.query<{ n: string }>('SELECT count(*) AS n FROM delivery_attempts WHERE delivery_id = $1', [deliveryId]);
      expect(Number(pgAttempts[0]!.n)).toBe(2);
      expect(sqliteAttempts()).toBe(attemptsBefore);

      const cluster = await hookrelay(['cluster', '--json'], terminal);
      expect(cluster.code, cluster.stderr).toBe(0);
      expect(JSON.parse(cluster.stdout).nodes).toEqual([expect.objectContaining({ pid: server.child.pid, self: true })]);
      // The registry has the node's URL: found without the runtime file, from another data dir.
      const elsewhere = await hookrelay(['cluster', '--json'], { ...terminal, HOOKRELAY_DATA_DIR: makeTempDir() });
      expect(elsewhere.code, elsewhere.stderr).toBe(0);
      expect(JSON.parse(elsewhere.stdout).nodes).toEqual([expect.objectContaining({ pid: server.child.pid, self: true })]);
      expect(elsewhere.stderr).toBe('');
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
      sqlite.close();
      await sink.close();
    }

    const offline = await hookrelay(['events', 'list', '--json'], terminal);
    expect(offline.code, offline.stderr).toBe(0);
    expect(JSON.parse(offline.stdout).items).toHaveLength(3);
    expect(offline.stderr).toContain(`; reading PostgreSQL at ${new URL(database.url).hostname}:5432/${database.name} directly`);
    const noNodes = await hookrelay(['cluster', '--json'], terminal);
    expect(JSON.parse(noNodes.stdout).nodes).toEqual([]);
  });
});

describeWithPostgres('two nodes on one PostgreSQL database, a terminal with neither data dir', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(() => database.drop());

  it('sends, shows the secret and checks rules with a node found in the registry, and names it', { timeout: 180_000 }, async () => {
    const sink = await startWebhookSink();
    const rulesDir = rulesDirWith({ 'local.yaml': `id: local\non: [transfer:succeeded]\nto:\n  url: ${sink.url}\n` });
    const node = { HOOKRELAY_RULES_DIR: rulesDir, HOOKRELAY_DATABASE_URL: database.url, HOOKRELAY_SECRET: SERVER_SECRET, HOOKRELAY_ALLOW_NETWORKS: '127.0.0.1/32' };
    const [dirA, dirB] = [makeTempDir(), makeTempDir()];
    const a = await startServeProcess({ ...node, HOOKRELAY_DATA_DIR: dirA });
    const b = await startServeProcess({ ...node, HOOKRELAY_DATA_DIR: dirB });
    const nodeIds = [dirA, dirB].map((dir) => JSON.parse(readFileSync(join(dir, 'hookrelay.runtime.json'), 'utf8')).nodeId as string);
    // Only the database: no runtime file, no secret, no allow-list, no admin token (the generated one is in the database).
    const terminal = { HOOKRELAY_DATA_DIR: makeTempDir(), HOOKRELAY_RULES_DIR: rulesDir, HOOKRELAY_DATABASE_URL: database.url };
    const askedNode = (stderr: string): string => {
      const asked = /asking node (\S+) on \S+ \(pid \d+\) at (\S+), found in the node registry/.exec(stderr);
      expect(asked, stderr).not.toBeNull();
      expect(nodeIds).toContain(asked![1]);
      expect([a.url, b.url]).toContain(asked![2]);
      return asked![2]!;
    };
    try {
      const sent = await hookrelay(['send-test'], terminal);
      expect(sent.code, sent.stderr).toBe(0);
      expect(sent.stdout).toMatch(/^HTTP 200/);
      expect(sent.stderr).toContain(`POST ${askedNode(sent.stderr)}/webhooks/checkout`);
      await sink.waitFor(1);

      const shown = await hookrelay(['secrets', 'show'], terminal);
      expect(shown.code, shown.stderr).toBe(0);
      expect(shown.stdout).toBe(`${SERVER_SECRET}\n`);
      expect(shown.stderr).toContain(`HOOKRELAY_SECRET in the environment of hookrelay serve, as the running server at ${askedNode(shown.stderr)}`);

      const checked = await hookrelay(['rules', 'check'], terminal);
      expect(checked.code, checked.stderr).toBe(0);
      expect(checked.stdout).toMatch(/^1 rule\(s\) OK/);
      expect(checked.stderr).toContain(`judged with the settings of the running server at ${askedNode(checked.stderr)}`);
      expect(checked.stderr).toContain('delivery.allowNetworks [127.0.0.1/32], from HOOKRELAY_ALLOW_NETWORKS');
    } finally {
      for (const server of [a, b]) server.child.kill('SIGTERM');
      await Promise.all([a.exited, b.exited]);
      await sink.close();
    }

    // Both stopped cleanly: no live node is registered, so the same commands judge offline and say so.
    const offline = await hookrelay(['rules', 'check'], terminal);
    expect(offline.code).toBe(1);
    expect(offline.stderr).toContain("judged offline with this terminal's settings");
  });
});
