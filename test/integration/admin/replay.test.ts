import { afterAll, afterEach, expect, it } from 'vitest';
import { describeEachBackend } from '../../helpers/backends.js';
import { eventually } from '../../helpers/rules.js';
import { removeTempDirs } from '../../helpers/temp-dir.js';
import { closeAll, fixtureOn, ruleYaml, startSink } from './admin-fixture.js';

afterEach(closeAll);
afterAll(() => removeTempDirs());

const BIG = 'where:\n  result.totalPriceUsd: { $gte: 100 }\n';

describeEachBackend('POST /admin/api/events/:id/replay', (backend) => {
  const startAdminFixture = fixtureOn(backend);

  it('replays through every current rule that matches: new deliveries (origin replay) that the worker sends', async () => {
    const sink = await startSink();
    const { api, ingest, transfer } = await startAdminFixture({
      rules: { 'a.yaml': ruleYaml('a', `${sink.url}/a`), 'b.yaml': ruleYaml('b', `${sink.url}/b`), 'big.yaml': ruleYaml('big', `${sink.url}/big`, BIG) },
    });
    const body = transfer({ unitPriceUsd: 10, quantity: 1 }); // not "big"
    const id = await ingest(body);
    await sink.waitFor(2);
    const reply = await api(`/events/${id}/replay`, { method: 'POST', body: {} });
    expect(reply.status).toBe(201);
    expect(reply.json.deliveries.map((d: { ruleId: string }) => d.ruleId).sort()).toEqual(['a', 'b']);
    // Read back after the commit: the worker (woken by the same commit) may have sent it already.
    expect(reply.json.deliveries[0]).toMatchObject({ eventId: id, origin: 'replay' });
    expect([{ state: 'pending', attempts: 0 }, { state: 'delivered', attempts: 1 }]).toContainEqual({ state: reply.json.deliveries[0].state, attempts: reply.json.deliveries[0].attempts });
    const received = await sink.waitFor(4);
    expect(received.slice(2).map((r) => r.path).sort()).toEqual(['/hooks/a', '/hooks/b']);
    expect(received.slice(2).every((r) => r.rawBody.equals(Buffer.from(JSON.stringify(body))))).toBe(true);
    const detail = await eventually(async () => {
      const r = await api(`/events/${id}`);
      return r.json.deliveries.filter((d: { state: string }) => d.state === 'delivered').length === 4 ? r : null;
    });
    expect(detail.json.deliveries.map((d: { origin: string }) => d.origin).sort()).toEqual(['ingest', 'ingest', 'replay', 'replay']);
  });

  it('replays through one rule only with ruleId', async () => {
    const sink = await startSink();
    const { api, ingest } = await startAdminFixture({ rules: { 'a.yaml': ruleYaml('a', `${sink.url}/a`), 'b.yaml': ruleYaml('b', `${sink.url}/b`) } });
    const id = await ingest();
    await sink.waitFor(2);
    const reply = await api(`/events/${id}/replay`, { method: 'POST', body: { ruleId: 'b' } });
    expect(reply.status).toBe(201);
    expect(reply.json.deliveries).toEqual([expect.objectContaining({ ruleId: 'b', origin: 'replay' })]);
    const received = await sink.waitFor(3);
    expect(received[2]!.path).toBe('/hooks/b');
  });

  it('refuses a rule the event does not match with 422 rule_mismatch and the reason; force replays anyway', async () => {
    const sink = await startSink();
    const { api, ingest, transfer } = await startAdminFixture({ rules: { 'big.yaml': ruleYaml('big', sink.url, BIG) } });
    const id = await ingest(transfer({ unitPriceUsd: 10, quantity: 1 }));
    const refused = await api(`/events/${id}/replay`, { method: 'POST', body: { ruleId: 'big' } });
    expect(refused.status).toBe(422);
    expect(refused.json.error.code).toBe('rule_mismatch');
    expect(refused.json.error.details).toEqual({ ruleId: 'big', reason: expect.stringContaining('totalPriceUsd') });
    expect((await api(`/events/${id}`)).json.deliveries).toEqual([]);

    const forced = await api(`/events/${id}/replay`, { method: 'POST', body: { ruleId: 'big', force: true } });
    expect(forced.status).toBe(201);
    expect(forced.json.deliveries).toEqual([expect.objectContaining({ ruleId: 'big', origin: 'replay' })]);
    await sink.waitFor(1);
  });

  it('answers 201 with no deliveries when no rule matches, 404 for unknown events or rules, 422 for bad bodies', async () => {
    const { api, ingest } = await startAdminFixture({ rules: { 'big.yaml': ruleYaml('big', 'http://127.0.0.1:9/x', BIG) } });
    const id = await ingest(); // 49.02 USD: not big
    expect(await api(`/events/${id}/replay`, { method: 'POST' })).toMatchObject({ status: 201, json: { deliveries: [] } });
    expect((await api('/events/12345/replay', { method: 'POST', body: {} })).status).toBe(404);
    const unknownRule = await api(`/events/${id}/replay`, { method: 'POST', body: { ruleId: 'nope' } });
    expect(unknownRule.status).toBe(404);
    expect(unknownRule.json.error.message).toContain('nope');
    const bad = await api(`/events/${id}/replay`, { method: 'POST', body: { force: true, extra: 1 } });
    expect(bad.status).toBe(422);
    expect(bad.json.error.code).toBe('validation_failed');
    expect(bad.json.error.details.issues.map((i: { path: string }) => i.path).sort()).toEqual(['(root)', 'force']);
    const forceAlone = await api(`/events/${id}/replay`, { method: 'POST', body: { force: true } });
    expect(forceAlone.json.error.details.issues).toEqual([expect.objectContaining({ path: 'force', message: 'force needs a ruleId' })]);
    const notJson = await api(`/events/${id}/replay`, { method: 'POST', body: '{"ruleId":' });
    expect(notJson.status).toBe(400);
    expect(notJson.json.error.code).toBe('invalid_json');
  });
});
