import { afterAll, afterEach, expect, it } from 'vitest';
import { describeEachBackend } from '../../helpers/backends.js';
import { eventually } from '../../helpers/rules.js';
import { removeTempDirs } from '../../helpers/temp-dir.js';
import { closeAll, fixtureOn, ruleYaml, startSink } from './admin-fixture.js';

afterEach(closeAll);
afterAll(() => removeTempDirs());

describeEachBackend('deliveries', (backend) => {
  const startAdminFixture = fixtureOn(backend);

  it('lists deliveries newest first, filtered by state, rule and event, paginated with an opaque cursor', async () => {
    const sink = await startSink((index) => (index % 2 === 0 ? 200 : 400)); // 400: dead at once
    const { api, ingest } = await startAdminFixture({ rules: { 'a.yaml': ruleYaml('a', sink.url), 'b.yaml': ruleYaml('b', sink.url, 'retry:\n  schedule: [1h]\n') } });
    const events = [await ingest(), await ingest(), await ingest()];
    await eventually(async () => (await api('/deliveries?ruleId=a&state=pending')).json.items.length === 0, 10_000, 'rule a settled');

    const all = await api('/deliveries?limit=500');
    expect(all.status).toBe(200);
    const allIds = all.json.items.map((d: { id: number }) => d.id);
    expect(allIds).toHaveLength(6);
    expect([...allIds].sort((x, y) => y - x)).toEqual(allIds);
    expect((await api('/deliveries?ruleId=b')).json.items.every((d: { ruleId: string; state: string }) => d.ruleId === 'b' && d.state === 'pending')).toBe(true);
    const dead = (await api('/deliveries?state=dead')).json.items;
    const delivered = (await api('/deliveries?state=delivered')).json.items;
    expect(dead.length + delivered.length).toBe(3);
    expect(dead.every((d: { lastStatus: number; deadReason: string }) => d.lastStatus === 400 && d.deadReason)).toBe(true);
    expect((await api(`/deliveries?eventId=${events[1]}`)).json.items.map((d: { eventId: number }) => d.eventId)).toEqual([events[1], events[1]]);

    const pages: number[] = [];
    let cursor: string | null = null;
    do {
      const page: { json: { items: { id: number }[]; nextCursor: string | null } } = await api(`/deliveries?limit=4${cursor ? `&cursor=${cursor}` : ''}`);
      pages.push(...page.json.items.map((d) => d.id));
      cursor = page.json.nextCursor;
    } while (cursor);
    expect(pages).toEqual(allIds);
  });

  it('GET /deliveries/:id has the attempt log; POST /deliveries/:id/retry makes a dead delivery pending and it is sent again', async () => {
    const sink = await startSink((index) => (index === 0 ? 400 : 200));
    const { api, ingest } = await startAdminFixture({ rules: { 'a.yaml': ruleYaml('a', sink.url) } });
    const eventId = await ingest();
    const [dead] = await eventually(async () => {
      const items = (await api(`/deliveries?eventId=${eventId}&state=dead`)).json.items;
      return items.length === 1 ? items : null;
    });
    const detail = await api(`/deliveries/${dead.id}`);
    expect(detail.status).toBe(200);
    expect(detail.json).toMatchObject({ id: dead.id, state: 'dead', attempts: 1, lastStatus: 400 });
    expect(detail.json.attemptLog).toEqual([expect.objectContaining({ attempt: 1, status: 400, outcome: 'dead', urlOrigin: new URL(sink.url).origin })]);

    const retried = await api(`/deliveries/${dead.id}/retry`, { method: 'POST' });
    expect(retried.status).toBe(200);
    expect(retried.json).toMatchObject({ id: dead.id, state: 'pending', deadReason: null });
    await sink.waitFor(2);
    const after = await eventually(async () => {
      const d = (await api(`/deliveries/${dead.id}`)).json;
      return d.state === 'delivered' ? d : null;
    });
    expect(after.attemptLog.map((a: { status: number }) => a.status)).toEqual([400, 200]);
  });

  it('retrying a pending delivery is 409 conflict; an unknown one 404', async () => {
    const { api, ingest } = await startAdminFixture({ rules: { 'later.yaml': ruleYaml('later', 'http://127.0.0.1:9/x', 'retry:\n  schedule: [1h]\n') } });
    await ingest();
    const [pending] = (await api('/deliveries')).json.items;
    const conflict = await api(`/deliveries/${pending.id}/retry`, { method: 'POST' });
    expect(conflict.status).toBe(409);
    expect(conflict.json.error.code).toBe('conflict');
    expect((await api('/deliveries/999/retry', { method: 'POST' })).status).toBe(404);
    expect((await api('/deliveries/999')).status).toBe(404);
    expect((await api('/deliveries?state=gone')).status).toBe(400);
  });
});
