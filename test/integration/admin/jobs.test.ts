import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { describeEachBackend } from '../../helpers/backends.js';
import type { Store } from '../../../src/store/store.js';
import { send } from '../../helpers/http.js';
import { startTestReceiver } from '../../helpers/receiver.js';
import { eventually } from '../../helpers/rules.js';
import { makeTempDir, removeTempDirs } from '../../helpers/temp-dir.js';
import { closeAll, fixtureOn, ruleYaml, startAdminFixture, startSink, type AdminFixture } from './admin-fixture.js';

afterEach(closeAll);
afterAll(() => removeTempDirs());

/** Stores `count` events, each with one dead-lettered delivery of `ruleId` (as a failed transform leaves them). */
async function seedDeadDeliveries(store: Store, count: number, ruleId: string, from = 0, ruleSetHash = 'seeded'): Promise<void> {
  const saves = [];
  for (let i = from; i < from + count; i++) {
    const body = Buffer.from(JSON.stringify({ event: 'transfer:succeeded', result: { id: `seed-${i}` } }));
    saves.push(
      store.saveEvent({
        source: 'checkout', event: 'transfer:succeeded', transferId: `seed-${i}`, checkoutId: null, email: i % 2 ? 'odd@example.com' : 'even@example.com',
        walletAddress: null, validation: 'valid', receivedAt: Date.now(), headers: {}, body,
        deliveries: [{ ruleId, ruleSetHash, body: null, contentType: 'application/json', deadReason: 'seeded' }],
      }),
    );
  }
  await Promise.all(saves);
}

/** The rules of the seeded deliveries (never sent: delivery is off where they are used). */
const SEEDED_RULES = { 'broken.yaml': ruleYaml('broken', 'http://127.0.0.1:9/broken'), 'other.yaml': ruleYaml('other', 'http://127.0.0.1:9/other') };

async function waitForJob(fixture: AdminFixture, id: number): Promise<any> {
  return eventually(async () => {
    const job = (await fixture.api(`/jobs/${id}`)).json;
    return job.state === 'running' ? null : job;
  }, 20_000, `job ${id} to finish`);
}

const deliveryCount = async (fixture: AdminFixture, query: string): Promise<number> => {
  let total = 0;
  let cursor: string | null = null;
  do {
    const page: { json: { items: unknown[]; nextCursor: string | null } } = await fixture.api(`/deliveries?limit=500&${query}${cursor ? `&cursor=${cursor}` : ''}`);
    total += page.json.items.length;
    cursor = page.json.nextCursor;
  } while (cursor);
  return total;
};

describeEachBackend('bulk retry job (POST /deliveries/retry)', (backend) => {
  const startAdminFixture = fixtureOn(backend);

  it('retries the matching dead-lettered deliveries in batches and reports progress until done', async () => {
    const fixture = await startAdminFixture({ delivery: { enabled: false }, rules: SEEDED_RULES });
    await seedDeadDeliveries(fixture.app.store, 450, 'broken');
    await seedDeadDeliveries(fixture.app.store, 50, 'other', 1000);

    const started = await fixture.api('/deliveries/retry', { method: 'POST', body: { filter: { ruleId: 'broken' } } });
    expect(started.status).toBe(202);
    expect(started.json).toMatchObject({ kind: 'retry', state: 'running', ruleId: 'broken', filter: { ruleId: 'broken' }, total: 450, finishedAt: null, error: null });
    const done = await waitForJob(fixture, started.json.id);
    expect(done).toMatchObject({ state: 'done', total: 450, processed: 450, created: 450, failed: 0, finishedAt: expect.any(String) });
    expect(await deliveryCount(fixture, 'ruleId=broken&state=pending')).toBe(450);
    expect(await deliveryCount(fixture, 'ruleId=broken&state=dead')).toBe(0);
    expect(await deliveryCount(fixture, 'ruleId=other&state=dead')).toBe(50);

    const byEmail = await fixture.api('/deliveries/retry', { method: 'POST', body: { filter: { ruleId: 'other', email: 'odd@example.com' } } });
    expect(await waitForJob(fixture, byEmail.json.id)).toMatchObject({ state: 'done', total: 25, processed: 25 });
    expect(await deliveryCount(fixture, 'ruleId=other&state=dead')).toBe(25);
  });

  it('skips dead deliveries whose rule was removed and says why: in the count, the job and a single retry', async () => {
    const fixture = await startAdminFixture({ delivery: { enabled: false }, rules: { 'kept.yaml': ruleYaml('kept', 'http://127.0.0.1:9/kept') } });
    await seedDeadDeliveries(fixture.app.store, 3, 'kept');
    await seedDeadDeliveries(fixture.app.store, 4, 'removed', 100);
    // An edited event sent to a URL: its one-off rule is in no rule file and is sent as kept, so it is retried.
    await fixture.app.store.saveRuleSet({ hash: 'one-off-set', kind: 'one-off', rules: [], firstLoadedAt: Date.now() });
    await seedDeadDeliveries(fixture.app.store, 1, 'edited-to-url', 200, 'one-off-set');
    const skipped = [{ ruleId: 'removed', count: 4, reason: 'rule_removed', message: expect.stringContaining('"removed" is no longer in the rule set') }];

    expect((await fixture.api('/deliveries/dead-count')).json).toEqual({ count: 4, skipped });
    expect((await fixture.api('/deliveries/dead-count?ruleId=removed')).json).toEqual({ count: 0, skipped });
    expect((await fixture.api('/deliveries/dead-count?ruleId=kept')).json).toEqual({ count: 3, skipped: [] });

    const started = await fixture.api('/deliveries/retry', { method: 'POST', body: { filter: {} } });
    expect(started.json).toMatchObject({ total: 4, summary: { skipped } });
    expect(await waitForJob(fixture, started.json.id)).toMatchObject({ state: 'done', total: 4, processed: 4, created: 4, failed: 0, summary: { skipped } });
    expect(await deliveryCount(fixture, 'ruleId=kept&state=pending')).toBe(3);
    expect(await deliveryCount(fixture, 'ruleId=edited-to-url&state=pending')).toBe(1);
    expect(await deliveryCount(fixture, 'ruleId=removed&state=dead')).toBe(4);

    const removed = (await fixture.api('/deliveries?ruleId=removed')).json.items[0];
    const single = await fixture.api(`/deliveries/${removed.id}/retry`, { method: 'POST' });
    expect([single.status, single.json.error.code]).toEqual([409, 'rule_removed']);
    expect(single.json.error.details).toEqual({ deliveryId: removed.id, eventId: removed.eventId, ruleId: 'removed' });
    expect(single.json.error.message).toMatch(/^Delivery \d+ is not retried: rule "removed" is no longer in the rule set/);
    expect((await fixture.api(`/deliveries/${removed.id}`)).json).toMatchObject({ state: 'dead', attempts: 0, deadReason: 'seeded' });
  });

  it('a cancelled job stops between batches: no half batch, cancelled state, and a second cancel is a conflict', async () => {
    const fixture = await startAdminFixture({ delivery: { enabled: false }, rules: SEEDED_RULES });
    await seedDeadDeliveries(fixture.app.store, 20_000, 'broken');
    const started = await fixture.api('/deliveries/retry', { method: 'POST', body: { filter: {} } });
    const second = await fixture.api('/deliveries/retry', { method: 'POST', body: { filter: { email: 'odd@example.com' } } });
    const third = await fixture.api('/deliveries/retry', { method: 'POST', body: { filter: {} } });
    expect(third.status).toBe(409); // two already running
    expect(third.json.error.code).toBe('conflict');

    const cancelled = await fixture.api(`/jobs/${started.json.id}/cancel`, { method: 'POST' });
    expect(cancelled.status).toBe(200);
    expect(cancelled.json).toMatchObject({ id: started.json.id, state: 'cancelled', finishedAt: expect.any(String) });
    await fixture.api(`/jobs/${second.json.id}/cancel`, { method: 'POST' });
    await fixture.app.adminJobs.settled(started.json.id);
    await fixture.app.adminJobs.settled(second.json.id);

    const [first, other] = [(await fixture.api(`/jobs/${started.json.id}`)).json, (await fixture.api(`/jobs/${second.json.id}`)).json];
    expect(first.state).toBe('cancelled');
    expect(first.processed).toBeLessThan(20_000);
    expect(first.processed % 200).toBe(0); // whole batches only
    // What the two jobs report is exactly what happened in the store.
    expect(await deliveryCount(fixture, 'state=pending')).toBe(first.created + other.created);
    expect(await deliveryCount(fixture, 'state=dead')).toBe(20_000 - first.created - other.created);
    const again = await fixture.api(`/jobs/${started.json.id}/cancel`, { method: 'POST' });
    expect(again.status).toBe(409);
  });

  it('refuses a delivery-state filter (dead-lettered only) and unknown keys', async () => {
    const fixture = await startAdminFixture();
    const reply = await fixture.api('/deliveries/retry', { method: 'POST', body: { filter: { deliveryState: 'pending', rule: 'x' } } });
    expect(reply.status).toBe(422);
    expect(reply.json.error.details.issues.map((i: { path: string }) => i.path)).toEqual(['filter']);
    expect((await fixture.api('/deliveries/retry', { method: 'POST', body: {} })).json.error.details.issues[0].path).toBe('filter');
  });
});

describeEachBackend('bulk replay job (POST /events/replay)', (backend) => {
  const startAdminFixture = fixtureOn(backend);

  it('replays the filtered events through the current rules (or one rule) and the worker sends them', async () => {
    const sink = await startSink();
    const fixture = await startAdminFixture({ rules: { 'a.yaml': ruleYaml('a', `${sink.url}/a`), 'b.yaml': ruleYaml('b', `${sink.url}/b`) } });
    const ada = [await fixture.ingest(fixture.transfer({ email: 'ada@example.com' })), await fixture.ingest(fixture.transfer({ email: 'ada@example.com' }))];
    await fixture.ingest(fixture.transfer({ email: 'bob@example.com' }));
    await sink.waitFor(6);

    const started = await fixture.api('/events/replay', { method: 'POST', body: { filter: { email: 'ada@example.com' } } });
    expect(started.status).toBe(202);
    expect(started.json).toMatchObject({ kind: 'replay', total: 2, ruleId: null, filter: { email: 'ada@example.com' } });
    expect(await waitForJob(fixture, started.json.id)).toMatchObject({ state: 'done', processed: 2, created: 4, failed: 0 });
    await sink.waitFor(10);

    const oneRule = await fixture.api('/events/replay', { method: 'POST', body: { filter: { email: 'ada@example.com' }, ruleId: 'b' } });
    expect(await waitForJob(fixture, oneRule.json.id)).toMatchObject({ state: 'done', processed: 2, created: 2 });
    const received = await sink.waitFor(12);
    expect(received.slice(10).map((r) => r.path)).toEqual(['/hooks/b', '/hooks/b']);
    for (const eventId of ada) {
      const origins = (await fixture.api(`/deliveries?eventId=${eventId}`)).json.items.map((d: { origin: string }) => d.origin);
      expect(origins.sort()).toEqual(['ingest', 'ingest', 'replay', 'replay', 'replay']);
    }
    expect((await fixture.api('/events/replay', { method: 'POST', body: { filter: {}, ruleId: 'nope' } })).status).toBe(404);
  });

  it('events stored after the job started are not replayed', async () => {
    const fixture = await startAdminFixture({ delivery: { enabled: false }, rules: { 'a.yaml': ruleYaml('a', 'http://127.0.0.1:9/a') } });
    for (let i = 0; i < 5; i++) await fixture.ingest();
    const [started] = await Promise.all([
      fixture.api('/events/replay', { method: 'POST', body: { filter: {} } }),
      ...Array.from({ length: 5 }, () => fixture.ingest()),
    ]);
    const done = await waitForJob(fixture, started.json.id);
    expect(done.processed).toBe(done.total);
    expect(done.created).toBe(done.total);
    expect((await fixture.api('/deliveries?limit=500')).json.items.filter((d: { origin: string }) => d.origin === 'replay')).toHaveLength(done.total);
  });
});

describe('jobs', () => {
  it('lists jobs newest first; 404 for an unknown job', async () => {
    const fixture = await startAdminFixture({ delivery: { enabled: false } });
    const a = (await fixture.api('/deliveries/retry', { method: 'POST', body: { filter: {} } })).json;
    await waitForJob(fixture, a.id);
    const b = (await fixture.api('/events/replay', { method: 'POST', body: { filter: {} } })).json;
    await waitForJob(fixture, b.id);
    expect((await fixture.api('/jobs')).json.map((j: { id: number; kind: string }) => [j.id, j.kind])).toEqual([[b.id, 'replay'], [a.id, 'retry']]);
    expect((await fixture.api('/jobs/999')).status).toBe(404);
    expect((await fixture.api('/jobs/999/cancel', { method: 'POST' })).status).toBe(404);
  });

  it('a job a restart interrupted is reported failed after the next start', async () => {
    const dataDir = makeTempDir();
    const first = await startTestReceiver({ dataDir, delivery: { enabled: false } });
    // A job recorded as running whose process is gone (as after a crash): the store still says running.
    const orphan = await first.store.createJob({ kind: 'replay', filter: {}, ruleId: null, total: 10, startedAt: Date.now(), nodeId: first.node.id });
    await first.close();
    const second = await startTestReceiver({ dataDir, delivery: { enabled: false } });
    try {
      const job = (await send(`${second.url}/admin/api/jobs/${orphan.id}`, { headers: { authorization: `Bearer ${second.adminToken}` } })).json;
      expect(job).toMatchObject({ state: 'failed', error: expect.stringContaining('restart'), finishedAt: expect.any(String) });
    } finally {
      await second.close();
    }
  });
});
