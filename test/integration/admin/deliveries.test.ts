import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, expect, it } from 'vitest';
import { describeEachBackend } from '../../helpers/backends.js';
import { freeLoopbackPort } from '../../helpers/http.js';
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

describeEachBackend('why a delivery waits or died', (backend) => {
  const startAdminFixture = fixtureOn(backend);

  it('a pending delivery of a disabled rule says it is paused and why; enabled again, it is not', async () => {
    const sink = await startSink();
    const later = ruleYaml('later', sink.url, 'retry:\n  schedule: [1h]\n'); // first attempt an hour away: stays pending
    const { api, ingest, rulesDir } = await startAdminFixture({ rules: { 'later.yaml': later } });
    const eventId = await ingest();
    const [pending] = (await api(`/deliveries?eventId=${eventId}`)).json.items;
    expect(pending).toMatchObject({ state: 'pending', pausedReason: null, lastAttemptSent: null });

    writeFileSync(join(rulesDir, 'later.yaml'), `${later}enabled: false\n`);
    const paused = await eventually(async () => {
      const [d] = (await api(`/deliveries?eventId=${eventId}`)).json.items;
      return d.pausedReason ? d : null;
    }, 10_000, 'the delivery paused');
    expect(paused).toMatchObject({ state: 'pending', pausedReason: 'rule "later" is disabled: its deliveries wait until it is enabled again' });
    expect((await api(`/deliveries/${pending.id}`)).json.pausedReason).toBe(paused.pausedReason);
    expect((await api(`/events/${eventId}`)).json.deliveries[0].pausedReason).toBe(paused.pausedReason);

    writeFileSync(join(rulesDir, 'later.yaml'), later);
    await eventually(async () => (await api(`/deliveries/${pending.id}`)).json.pausedReason === null, 10_000, 'the delivery unpaused');
  });

  it('a dead letter tells whether it was ever sent: refused before sending, its transform failed, or answered', async () => {
    const sink = await startSink(() => 400);
    const { api, ingest } = await startAdminFixture({
      rules: {
        // A private address the SSRF guard refuses (only loopback is allowed here): no request leaves.
        'private.yaml': ruleYaml('private', 'http://10.255.255.1/hook'),
        'broken.yaml': ruleYaml('broken', sink.url, 'transform: $error("boom")\n'),
        'refusing.yaml': ruleYaml('refusing', sink.url),
      },
    });
    await ingest();
    await eventually(async () => (await api('/deliveries?state=dead')).json.items.length === 3, 10_000, 'three dead letters');
    const byRule = Object.fromEntries((await api('/deliveries?state=dead')).json.items.map((d: { ruleId: string }) => [d.ruleId, d]));
    expect(byRule.private).toMatchObject({ attempts: 1, lastStatus: null, lastAttemptSent: false, lastError: expect.stringMatching(/^destination_refused: /) });
    expect(byRule.broken).toMatchObject({ attempts: 1, lastStatus: null, lastAttemptSent: false, lastError: expect.stringMatching(/^transform_failed: transform failed at position \d+: D3137 boom$/), deadReason: expect.stringContaining('boom') });
    expect(byRule.refusing).toMatchObject({ attempts: 1, lastStatus: 400, lastAttemptSent: true });
  });

  it('each attempt says whether its request was sent: a refused connection was not, a timeout was but got no response', async () => {
    const hanging = await startSink(() => 'hang');
    const closedPort = await freeLoopbackPort(); // nothing listens there: the connection is refused
    const { api, ingest } = await startAdminFixture({
      rules: {
        'closed.yaml': ruleYaml('closed', `http://127.0.0.1:${closedPort}/hook`, 'retry:\n  schedule: [0s]\n'),
        'slow.yaml': ruleYaml('slow', hanging.url, 'timeout: 200ms\nretry:\n  schedule: [0s]\n'),
      },
    });
    await ingest();
    const dead = await eventually(async () => {
      const items = (await api('/deliveries?state=dead')).json.items;
      return items.length === 2 ? items : null;
    }, 10_000, 'two dead letters');
    const attempts = Object.fromEntries(
      await Promise.all(dead.map(async (d: { id: number; ruleId: string }) => [d.ruleId, (await api(`/deliveries/${d.id}`)).json.attemptLog]) as Promise<[string, unknown]>[]),
    );
    expect(attempts.closed).toEqual([expect.objectContaining({ status: null, errorCode: 'ECONNREFUSED', sent: false })]);
    expect(attempts.slow).toEqual([expect.objectContaining({ status: null, errorCode: 'timeout', sent: true })]);
  });

  it('GET /deliveries/dead-count counts what a bulk retry would retry, per rule or in all', async () => {
    const sink = await startSink(() => 400);
    const { api, ingest } = await startAdminFixture({ rules: { 'a.yaml': ruleYaml('a', sink.url), 'b.yaml': ruleYaml('b', sink.url) } });
    await ingest();
    await ingest();
    await eventually(async () => (await api('/deliveries?state=dead')).json.items.length === 4, 10_000, 'four dead letters');
    expect((await api('/deliveries/dead-count')).json).toEqual({ count: 4, skipped: [] });
    expect((await api('/deliveries/dead-count?ruleId=a')).json).toEqual({ count: 2, skipped: [] });
    expect((await api('/deliveries/dead-count?ruleId=nope')).json).toEqual({ count: 0, skipped: [] });
    const bad = await api('/deliveries/dead-count?rule=a');
    expect([bad.status, bad.json.error.code]).toEqual([400, 'bad_request']);
  });
});
