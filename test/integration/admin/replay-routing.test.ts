import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, expect, it } from 'vitest';
import { describeEachBackend } from '../../helpers/backends.js';
import { eventually } from '../../helpers/rules.js';
import { removeTempDirs } from '../../helpers/temp-dir.js';
import { closeAll, fixtureOn, ruleYaml, startSink, type AdminFixture } from './admin-fixture.js';

afterEach(closeAll);
afterAll(() => removeTempDirs());

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Rewrites the rule files and waits until the receiver has loaded (and kept) them. */
async function changeRules(fixture: AdminFixture, files: Record<string, string>): Promise<void> {
  const before = fixture.app.rules.current().hash;
  for (const [name, text] of Object.entries(files)) writeFileSync(join(fixture.rulesDir, name), text);
  await eventually(() => fixture.app.rules.current().hash !== before, 8000, 'the new rules to be loaded');
}

const sentTo = (answer: { planned: { ruleId: string; destination: string }[] }): string[] => answer.planned.map((p) => `${p.ruleId} ${p.destination}`);

describeEachBackend('replay routing modes', (backend) => {
  const startAdminFixture = fixtureOn(backend);

  it('original sends to the destination of that time, current to today\'s; dry runs send nothing; retries keep the version', async () => {
    const old = await startSink((index) => (index === 1 ? 500 : 200)); // the original-mode replay fails once, then succeeds
    const now = await startSink();
    const fixture = await startAdminFixture({ rules: { 'fwd.yaml': ruleYaml('fwd', old.url, 'retry:\n  schedule: [0ms, 100ms]\n') } });
    const { api, ingest } = fixture;
    const id = await ingest();
    await old.waitFor(1);
    const firstHash = fixture.app.rules.current().hash;
    await changeRules(fixture, { 'fwd.yaml': ruleYaml('fwd', now.url, 'retry:\n  schedule: [0ms, 100ms]\n') });

    const originalDry = await api(`/events/${id}/replay`, { method: 'POST', body: { route: 'original', dryRun: true } });
    expect(originalDry.status).toBe(200);
    expect(originalDry.json).toMatchObject({ route: 'original', ruleSetHash: firstHash, dryRun: true, withheld: [], deliveries: [] });
    expect(sentTo(originalDry.json)).toEqual([`fwd ${old.url}`]);
    const currentDry = await api(`/events/${id}/replay`, { method: 'POST', body: { dryRun: true } });
    expect(currentDry.json).toMatchObject({ route: 'current', ruleSetHash: fixture.app.rules.current().hash, deliveries: [] });
    expect(sentTo(currentDry.json)).toEqual([`fwd ${now.url}`]);
    await sleep(300);
    expect([old.received.length, now.received.length]).toEqual([1, 0]);
    expect((await fixture.app.store.listDeliveries({ eventId: id }, { limit: 10 })).items).toHaveLength(1);

    const original = await api(`/events/${id}/replay`, { method: 'POST', body: { route: 'original' } });
    expect(original.status).toBe(201);
    expect(original.json.deliveries).toEqual([expect.objectContaining({ ruleId: 'fwd', ruleSetHash: firstHash, origin: 'replay' })]);
    await old.waitFor(3); // the failed attempt and its retry, both to the old destination
    const retried = await eventually(async () => {
      const d = await fixture.app.store.getDelivery(original.json.deliveries[0].id);
      return d?.state === 'delivered' ? d : null;
    });
    expect(retried.attemptLog.map((a) => a.status)).toEqual([500, 200]);

    const current = await api(`/events/${id}/replay`, { method: 'POST', body: { route: 'current' } });
    expect(current.json.deliveries).toEqual([expect.objectContaining({ ruleSetHash: fixture.app.rules.current().hash })]);
    await now.waitFor(1);
    expect(old.received).toHaveLength(3);
  });

  it('reports a rule removed since, instead of sending it or skipping it silently', async () => {
    const sink = await startSink();
    const fixture = await startAdminFixture({ rules: { 'a.yaml': ruleYaml('a', `${sink.url}/a`), 'b.yaml': ruleYaml('b', `${sink.url}/b`) } });
    const id = await fixture.ingest();
    await sink.waitFor(2);
    await changeRules(fixture, { 'b.yaml': ruleYaml('b2', `${sink.url}/b2`) });
    const reply = await fixture.api(`/events/${id}/replay`, { method: 'POST', body: { route: 'original' } });
    expect(sentTo(reply.json)).toEqual([`a ${sink.url}/a`]);
    expect(reply.json.withheld).toEqual([{ ruleId: 'b', reason: expect.stringMatching(/rule "b" is no longer in today's rules: not sent/) }]);

    // In bulk, counted per rule beside what is sent.
    const bulk = await fixture.api('/events/replay', { method: 'POST', body: { filter: {}, route: 'original', dryRun: true } });
    const job = await eventually(async () => {
      const polled = await fixture.api(`/jobs/${bulk.json.id}`);
      return polled.json.state === 'done' ? polled.json : null;
    });
    expect(job.summary).toMatchObject({ perRule: { a: 1 }, withheld: { b: 1 } });
  });

  it('says plainly that the original routing of an event stored before rule sets were kept is unknown, and offers current', async () => {
    const sink = await startSink();
    const fixture = await startAdminFixture({ rules: { 'a.yaml': ruleYaml('a', sink.url) } });
    const raw = Buffer.from(JSON.stringify(fixture.transfer()));
    const old = await fixture.app.store.saveEvent({
      source: 'checkout', event: 'transfer:succeeded', transferId: 'before-kept', checkoutId: null, email: null, walletAddress: null,
      validation: 'valid', receivedAt: Date.now(), headers: {}, body: Buffer.from(raw.toString().replace(/"id":"[^"]*"/, '"id":"before-kept"')),
    });
    const reply = await fixture.api(`/events/${old.id}/replay`, { method: 'POST', body: { route: 'original' } });
    expect(reply.status).toBe(409);
    expect(reply.json.error).toMatchObject({ code: 'original_routing_unknown', details: { eventId: old.id, offer: 'current' } });
    expect(reply.json.error.message).toMatch(/original routing|rules that routed it are unknown/);

    // An event stored before events recorded their rule set, whose deliveries name a kept one: routed by that set.
    const hash = fixture.app.rules.current().hash;
    const planned = await fixture.app.store.saveEvent({
      source: 'checkout', event: 'transfer:succeeded', transferId: 'planned-before', checkoutId: null, email: null, walletAddress: null,
      validation: 'valid', receivedAt: Date.now(), headers: {}, body: Buffer.from(raw.toString().replace(/"id":"[^"]*"/, '"id":"planned-before"')),
      deliveries: [{ ruleId: 'a', ruleSetHash: hash, body: null, contentType: 'application/json' }],
    });
    const routed = await fixture.api(`/events/${planned.id}/replay`, { method: 'POST', body: { route: 'original', dryRun: true } });
    expect(routed.json).toMatchObject({ route: 'original', ruleSetHash: hash, planned: [expect.objectContaining({ ruleId: 'a' })] });
  });

  it('bulk: a dry run counts per rule with a sample and sends nothing; the real run follows each event\'s own rule set', async () => {
    const old = await startSink();
    const now = await startSink();
    const fixture = await startAdminFixture({ rules: { 'fwd.yaml': ruleYaml('fwd', old.url) } });
    for (let i = 0; i < 3; i += 1) await fixture.ingest(fixture.transfer());
    await old.waitFor(3);
    await changeRules(fixture, { 'fwd.yaml': ruleYaml('fwd', now.url) });
    const finished = async (jobId: number) =>
      eventually(async () => {
        const job = await fixture.api(`/jobs/${jobId}`);
        return job.json.state === 'done' ? job.json : null;
      });

    const dry = await fixture.api('/events/replay', { method: 'POST', body: { filter: {}, route: 'original', dryRun: true } });
    expect(dry.status).toBe(202);
    const dryJob = await finished(dry.json.id);
    expect(dryJob).toMatchObject({ processed: 3, created: 3, summary: { route: 'original', dryRun: true, perRule: { fwd: 3 }, withheld: {}, unknownRouting: 0 } });
    expect(dryJob.summary.sample).toHaveLength(3);
    expect(dryJob.summary.sample[0]).toMatchObject({ ruleId: 'fwd', destination: old.url });
    await sleep(300);
    expect([old.received.length, now.received.length]).toEqual([3, 0]);

    const real = await fixture.api('/events/replay', { method: 'POST', body: { filter: {}, route: 'original' } });
    expect(await finished(real.json.id)).toMatchObject({ created: 3, summary: { route: 'original', dryRun: false } });
    await old.waitFor(6);
    expect(now.received).toHaveLength(0);
  });
});
