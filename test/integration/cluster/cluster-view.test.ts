import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, expect, it } from 'vitest';
import { sampleTransferSucceeded } from '../../../src/samples/transfer-succeeded.js';
import { SqliteStore } from '../../../src/store/sqlite/sqlite-store.js';
import { VERSION } from '../../../src/version.js';
import { describeEachBackend } from '../../helpers/backends.js';
import { postSigned, send } from '../../helpers/http.js';
import { startTestReceiver, TEST_SECRET, type TestReceiver } from '../../helpers/receiver.js';
import { eventually } from '../../helpers/rules.js';
import { makeTempDir, removeTempDirs } from '../../helpers/temp-dir.js';

const running: TestReceiver[] = [];
afterEach(async () => {
  for (const app of running.splice(0)) await app.close();
});
afterAll(() => removeTempDirs());

const api = async (app: TestReceiver, path: string) => send(`${app.url}/admin/api${path}`, { headers: { authorization: `Bearer ${app.adminToken}` } });

describeEachBackend('the cluster view and node roles', (backend) => {
  const start = async (overrides: Record<string, unknown> = {}): Promise<TestReceiver> => {
    const app = await startTestReceiver({ ...(await backend.storage()), ...overrides });
    running.push(app);
    return app;
  };

  it('GET /admin/api/cluster lists this node, marked, with its role, version and rule set; warns when another live node differs', async () => {
    const app = await start();
    const alone = await api(app, '/cluster');
    expect(alone.status).toBe(200);
    expect(alone.json).toEqual({
      nodes: [{ id: app.node.id, host: app.node.node.host, pid: process.pid, role: 'all', version: VERSION, ruleSetHash: app.rules.current().hash, startedAt: expect.any(String), lastHeartbeat: expect.any(String), self: true }],
      gone: [],
      warnings: [],
    });
    // Another node on the same store, with other rule files and an older version.
    await app.store.registerNode({ id: 'node_other', host: 'web-2', pid: 7, role: 'worker', version: '0.9.0', ruleSetHash: 'otherhash', heartbeatMs: 60_000, startedAt: Date.now() });
    const two = (await api(app, '/cluster')).json;
    expect(two.nodes.map((n: { id: string; self: boolean }) => [n.id, n.self])).toEqual([[app.node.id, true], ['node_other', false]]);
    expect(two.warnings.map((w: { code: string }) => w.code)).toEqual(['rule_sets_differ', 'versions_differ']);
    expect(two.warnings[0].values).toEqual({ [app.rules.current().hash]: [app.node.id], otherhash: ['node_other'] });
    expect(two.warnings[1].message).toContain('0.9.0: node_other');
    await app.store.deregisterNode('node_other');
    const after = (await api(app, '/cluster')).json;
    expect(after.warnings).toEqual([]);
    // The node that left is not dropped without a word: it is listed as gone, with when it left.
    expect(after.gone).toEqual([{ id: 'node_other', host: 'web-2', pid: 7, role: 'worker', version: '0.9.0', ruleSetHash: 'otherhash', startedAt: expect.any(String), state: 'left', since: expect.any(String) }]);
    expect(Math.abs(Date.parse(after.gone[0].since) - Date.now())).toBeLessThan(5_000);
  });

  it('a node that stops cleanly leaves the registry at once', async () => {
    const storage = await backend.storage();
    const app = await startTestReceiver(storage);
    running.push(app);
    const id = app.node.id;
    expect((await app.store.listLiveNodes()).map((n) => n.id)).toContain(id);
    // PostgreSQL: a second node on the same database watches; SQLite: the file is opened again once closed.
    const second = backend.name === 'PostgreSQL' ? await startTestReceiver(storage) : null;
    if (second) running.push(second);
    const watcher = second?.store ?? null;
    if (second) expect((await watcher!.listLiveNodes()).map((n) => n.id).sort()).toEqual([id, second.node.id].sort());
    await app.close();
    running.splice(running.indexOf(app), 1);
    const after = watcher ?? new SqliteStore({ dataDir: app.dataDir, durability: 'normal' });
    try {
      expect((await after.listLiveNodes()).map((n) => n.id)).not.toContain(id);
      expect((await after.listGoneNodes(10)).find((n) => n.id === id)).toMatchObject({ left: true, host: app.node.node.host });
    } finally {
      if (!watcher) await after.close();
    }
  });

  it('heartbeats: a node whose row was removed registers again, and each heartbeat fails the jobs of nodes that stopped', async () => {
    const app = await start({ cluster: { heartbeatMs: 200 } });
    const crashed = { id: 'node_crashed', host: 'web-9', pid: 9, role: 'all' as const, version: VERSION, ruleSetHash: null, heartbeatMs: 100, startedAt: Date.now() };
    await app.store.registerNode(crashed);
    const job = await app.store.createJob({ kind: 'retry', filter: {}, ruleId: null, total: 1, startedAt: Date.now(), nodeId: crashed.id });
    const ownJob = await app.store.createJob({ kind: 'retry', filter: {}, ruleId: null, total: 1, startedAt: Date.now(), nodeId: app.node.id });
    // node_crashed never heartbeats again: after three of its intervals a heartbeat of this node fails its job.
    const failed = await eventually(async () => {
      const stored = (await app.store.getJob(job.id))!;
      return stored.state === 'failed' ? stored : null;
    }, 15_000, 'the crashed node\'s job to be failed');
    expect(failed.error).toContain('stopped node');
    expect((await app.store.getJob(ownJob.id))!.state).toBe('running'); // this node is live
    await app.store.deregisterNode(app.node.id);
    await eventually(async () => (await app.store.listLiveNodes()).some((n) => n.id === app.node.id), 15_000, 'the node to register again');
    await app.store.finishJob(ownJob.id, 'done', null);
  });

  it('a rule edit reaches the registry at once, not at the next heartbeat', async () => {
    const rulesDir = makeTempDir();
    const app = await start({ rulesDir, cluster: { heartbeatMs: 300_000 } });
    const before = app.rules.current().hash;
    writeFileSync(join(rulesDir, 'new.yaml'), 'id: new\non: [transfer:succeeded]\nto:\n  url: http://127.0.0.1:9/hook\n');
    const reloaded = await eventually(() => (app.rules.current().hash !== before ? app.rules.current().hash : null), 15_000, 'the rules to reload');
    await eventually(async () => (await app.store.listLiveNodes()).find((n) => n.id === app.node.id)?.ruleSetHash === reloaded, 10_000, 'the new hash in the registry');
  });

  it('role worker: webhooks are answered 503 not_a_receiver, /readyz says not ready, /healthz ok, and the worker runs', async () => {
    const app = await start({ role: 'worker' });
    expect(app.delivery).not.toBeNull();
    const reply = await postSigned(app.webhookUrl(), sampleTransferSucceeded(), TEST_SECRET);
    expect(reply.status).toBe(503);
    expect(reply.json.error).toMatchObject({ code: 'not_a_receiver' });
    expect(await app.store.countEvents({})).toBe(0);
    const ready = await send(`${app.url}/readyz`);
    expect(ready.status).toBe(503);
    expect(ready.json).toEqual({ status: 'not_ready' });
    expect((await api(app, '/readiness')).json).toMatchObject({ status: 'not_ready', checks: { store: 'ok', role: 'worker: receives no webhooks', delivery: 'event loop' } });
    expect((await send(`${app.url}/healthz`)).status).toBe(200);
    expect((await api(app, '/cluster')).json.nodes[0]).toMatchObject({ role: 'worker', self: true });
  });

  it('role receiver: stores webhooks, runs no delivery loop, is ready', async () => {
    const app = await start({ role: 'receiver' });
    expect(app.delivery).toBeNull();
    const reply = await postSigned(app.webhookUrl(), sampleTransferSucceeded(), TEST_SECRET);
    expect(reply.status).toBe(200);
    expect((await send(`${app.url}/readyz`)).json).toEqual({ status: 'ready' });
    expect((await api(app, '/readiness')).json).toMatchObject({ status: 'ready', checks: { role: 'receiver' } });
    expect((await api(app, '/readiness')).json.checks).not.toHaveProperty('delivery');
  });

  it('delivery.enabled: false still works, as role receiver, with a deprecation warning', async () => {
    const app = await start({ delivery: { enabled: false } });
    expect(app.delivery).toBeNull();
    expect(app.node.node.role).toBe('receiver');
    const warning = await eventually(() => app.logLines().find((line) => String(line.msg).includes('delivery.enabled is deprecated')));
    expect(warning.level).toBe(40);
  });
});
