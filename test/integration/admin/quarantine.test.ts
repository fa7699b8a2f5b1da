import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, expect, it } from 'vitest';
import { describeEachBackend } from '../../helpers/backends.js';
import { postSigned } from '../../helpers/http.js';
import { TEST_SECRET } from '../../helpers/receiver.js';
import { eventually } from '../../helpers/rules.js';
import { makeTempDir, removeTempDirs } from '../../helpers/temp-dir.js';
import { closeAll, fixtureOn, ruleYaml, startSink } from './admin-fixture.js';

afterEach(closeAll);
afterAll(() => removeTempDirs());

/** A contracts directory with one contract for checkout/transfer:succeeded that requires a `vatUsd` number. */
function contractsDir(mode: 'warn' | 'quarantine'): string {
  const dir = makeTempDir();
  writeFileSync(join(dir, 'transfer.schema.json'), JSON.stringify({
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    'x-hookrelay-source': 'checkout',
    'x-hookrelay-event': 'transfer:succeeded',
    'x-hookrelay-mode': mode,
    type: 'object',
    required: ['event', 'result'],
    properties: { result: { type: 'object', required: ['vatUsd'], properties: { vatUsd: { type: 'number' } } } },
  }));
  return dir;
}

describeEachBackend('quarantine', (backend) => {
  const startAdminFixture = fixtureOn(backend);

  it('keeps an authentic body failing the event schema (422, same answer), once, and delivers it once after release', async () => {
    const sink = await startSink();
    const { app, api, transfer } = await startAdminFixture({ rules: { 'a.yaml': ruleYaml('a', `${sink.url}/a`) } });
    const body = transfer();
    const drifted = { ...body, result: { ...body.result, totalPriceUsd: String(body.result.totalPriceUsd) } };
    const first = await postSigned(app.webhookUrl(), drifted, TEST_SECRET);
    expect(first.status).toBe(422);
    expect(first.json.error.code).toBe('invalid_payload');
    expect(first.json.error.details.issues).toEqual([expect.objectContaining({ path: 'result.totalPriceUsd' })]);
    // The same bytes again: the same answer, still one stored row.
    const raw = Buffer.from(JSON.stringify(drifted));
    expect((await postSigned(app.webhookUrl(), raw, TEST_SECRET)).json).toEqual(first.json);
    // A body whose signature fails is not kept.
    expect((await postSigned(app.webhookUrl(), drifted, 'wrong-secret-0123456789')).status).toBe(401);

    const held = await api('/events?quarantine=held');
    expect(held.status).toBe(200);
    expect(held.json.items).toHaveLength(1);
    const item = held.json.items[0];
    expect(item).toMatchObject({ event: 'transfer:succeeded', validation: 'invalid', quarantine: 'held', receivedCount: 2, release: null });
    expect(item.transferId).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(item.issues).toEqual({ from: 'schema', issues: [expect.objectContaining({ path: 'result.totalPriceUsd' })] });
    const detail = await api(`/events/${item.id}`);
    expect(Buffer.from(detail.json.event.bodyBase64, 'base64').equals(raw)).toBe(true);
    expect(detail.json.event.headers['x-service-signature']).toBeDefined();
    expect(detail.json.deliveries).toEqual([]);

    const heldGauge = async (): Promise<string | undefined> =>
      (await (await fetch(`${app.url}/metrics`)).text()).match(/^hookrelay_quarantined_events (\d+)$/m)?.[1];
    expect(await heldGauge()).toBe('1');

    // The schema still refuses it: a release needs force, recorded with who.
    const refused = await api(`/events/${item.id}/release`, { method: 'POST', body: {} });
    expect(refused.status).toBe(422);
    expect(refused.json.error.code).toBe('release_refused');
    expect(sink.received).toHaveLength(0);
    const released = await api(`/events/${item.id}/release`, { method: 'POST', body: { force: true, by: 'alice' } });
    expect(released.status).toBe(200);
    expect(released.json.deliveryIds).toHaveLength(1);
    expect(released.json.event).toMatchObject({ quarantine: 'released', release: { releasedBy: 'alice', forced: true } });
    const [delivered] = await sink.waitFor(1);
    expect(delivered!.rawBody.equals(raw)).toBe(true);

    const again = await api(`/events/${item.id}/release`, { method: 'POST', body: { force: true } });
    expect(again.status).toBe(409);
    expect(again.json.error.code).toBe('already_released');
    expect((await api('/events?quarantine=held')).json.items).toEqual([]);
    expect(await heldGauge()).toBe('0');
    expect((await api('/events?quarantine=released')).json.items.map((e: { id: number }) => e.id)).toEqual([item.id]);
    await eventually(async () => (await api(`/events/${item.id}`)).json.deliveries[0]?.state === 'delivered');
    expect(sink.received).toHaveLength(1);
  });

  it('refuses to release a held body whose transfer was stored since from a corrected body, unless forced', async () => {
    const sink = await startSink();
    const { app, api, transfer } = await startAdminFixture({ rules: { 'a.yaml': ruleYaml('a', `${sink.url}/a`) } });
    const body = transfer();
    const drifted = { ...body, result: { ...body.result, totalPriceUsd: String(body.result.totalPriceUsd) } };
    expect((await postSigned(app.webhookUrl(), drifted, TEST_SECRET)).status).toBe(422);
    const [held] = (await api('/events?quarantine=held')).json.items;
    // The sender fixes its body and sends the same transfer again: stored and routed as an event of its own.
    const corrected = await postSigned(app.webhookUrl(), body, TEST_SECRET);
    expect(corrected.status).toBe(200);
    await sink.waitFor(1);

    const refused = await api(`/events/${held.id}/release`, { method: 'POST', body: { force: false } });
    expect(refused.status).toBe(409);
    expect(refused.json.error).toMatchObject({ code: 'transfer_stored_since', details: { eventId: corrected.json.id, transferId: body.result.id } });
    expect((await api(`/events/${held.id}`)).json.event.quarantine).toBe('held');

    const forced = await api(`/events/${held.id}/release`, { method: 'POST', body: { force: true, by: 'ada' } });
    expect(forced.status).toBe(200);
    expect(forced.json.event.release).toMatchObject({ releasedBy: 'ada', forced: true });
    await sink.waitFor(2);
  });

  it('a contract in quarantine mode answers 200, keeps the event undelivered until released, then delivers it once', async () => {
    const sink = await startSink();
    const { api, ingest, transfer } = await startAdminFixture({
      rules: { 'a.yaml': ruleYaml('a', `${sink.url}/a`) },
      overrides: { contracts: { dir: contractsDir('quarantine') } },
    });
    const id = await ingest(transfer());
    const detail = await api(`/events/${id}`);
    expect(detail.json.event).toMatchObject({ quarantine: 'held', validation: 'valid', issues: { from: 'contract', contract: 'transfer.schema.json' } });
    expect(detail.json.event.issues.issues).toEqual([expect.objectContaining({ path: 'result', code: 'required' })]);
    expect(detail.json.deliveries).toEqual([]);
    expect((await api(`/events/${id}/replay`, { method: 'POST', body: {} })).json.error.code).toBe('event_quarantined');
    // A body that satisfies the contract is routed as usual.
    const fine = await ingest({ ...transfer(), result: { ...transfer().result, vatUsd: 1 } });
    await sink.waitFor(1);
    expect((await api(`/events/${fine}`)).json.event.quarantine).toBeNull();
    // A bulk replay passes over the held event: only its release routes it.
    const job = await api('/events/replay', { method: 'POST', body: { filter: {} } });
    expect(job.status).toBe(202);
    await eventually(async () => (await api(`/jobs/${job.json.id}`)).json.state === 'done');
    await sink.waitFor(2);
    expect((await api(`/events/${id}`)).json.deliveries).toEqual([]);

    const released = await api(`/events/${id}/release`, { method: 'POST', body: { force: true } });
    expect(released.status).toBe(200);
    await sink.waitFor(3);
    expect((await api(`/events/${id}/release`, { method: 'POST', body: { force: true } })).status).toBe(409);
    expect((await api(`/events/${fine}/release`, { method: 'POST', body: {} })).json.error.code).toBe('not_quarantined');
    await eventually(async () => (await api(`/events/${id}`)).json.deliveries[0]?.state === 'delivered');
    expect(sink.received).toHaveLength(3);
  });

  it('a contract in warn mode forwards the event and records the violation', async () => {
    const sink = await startSink();
    const { api, ingest, transfer } = await startAdminFixture({
      rules: { 'a.yaml': ruleYaml('a', `${sink.url}/a`) },
      overrides: { contracts: { dir: contractsDir('warn') } },
    });
    const id = await ingest(transfer());
    await sink.waitFor(1);
    const detail = await api(`/events/${id}`);
    expect(detail.json.event).toMatchObject({ quarantine: null, issues: { from: 'contract', contract: 'transfer.schema.json' } });
  });
});
