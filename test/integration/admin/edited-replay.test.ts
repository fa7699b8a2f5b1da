import { createHmac } from 'node:crypto';
import { afterAll, afterEach, expect, it } from 'vitest';
import { describeEachBackend } from '../../helpers/backends.js';
import { postSigned } from '../../helpers/http.js';
import { TEST_SECRET } from '../../helpers/receiver.js';
import { eventually } from '../../helpers/rules.js';
import { removeTempDirs } from '../../helpers/temp-dir.js';
import { closeAll, fixtureOn, ruleYaml, startSink } from './admin-fixture.js';

afterEach(closeAll);
afterAll(() => removeTempDirs());

const RULE_SECRET = 'rule-signing-secret';
const SIGNED = `sign:\n  scheme: hmac-sha256-hex\n  secret: ${RULE_SECRET}\n`;

describeEachBackend('POST /admin/api/events/:id/edited-replay', (backend) => {
  const startAdminFixture = fixtureOn(backend);

  it('stores the edit as a linked copy, leaves the original untouched, and sends it signed by the rule', async () => {
    const sink = await startSink();
    const fixture = await startAdminFixture({ rules: { 'fwd.yaml': ruleYaml('fwd', sink.url, SIGNED) } });
    const { api, app } = fixture;
    const body = fixture.transfer({ quantity: 1 });
    const id = await fixture.ingest(body);
    const settled = async () =>
      eventually(async () => {
        const r = (await api(`/events/${id}`)).json;
        return r.deliveries.every((d: { state: string }) => d.state === 'delivered') ? r : null;
      });
    const originalBefore = await settled();

    const edited = { ...body, result: { ...body.result, quantity: 7 } };
    const editedText = JSON.stringify(edited, null, 2);
    const reply = await api(`/events/${id}/edited-replay`, { method: 'POST', body: { body: editedText } });
    expect(reply.status).toBe(201);
    const copy = reply.json.event;
    expect(copy).toMatchObject({ transferId: body.result.id, validation: 'valid', body: editedText, edit: { editedFrom: id, via: 'api', number: 1 } });
    expect(copy.headers).toEqual({ 'content-type': 'application/json' });
    expect(reply.json.changes).toEqual([{ path: 'result.quantity', change: 'changed', before: 1, after: 7 }]);
    expect(reply.json.appliedWithoutMatch).toBeNull();
    expect(reply.json.deliveries).toEqual([expect.objectContaining({ eventId: copy.id, ruleId: 'fwd', origin: 'replay' })]);

    const [, sent] = await sink.waitFor(2);
    expect(sent!.rawBody.toString()).toBe(editedText);
    expect(sent!.headers['x-service-signature']).toBe(createHmac('sha256', RULE_SECRET).update(sent!.rawBody).digest('hex'));

    // The original: same bytes, same deliveries, same everything.
    expect(await settled()).toEqual(originalBefore);
    // A real repeat of the original is still a duplicate of the original, not of its copy.
    const repeat = await postSigned(app.webhookUrl(), body, TEST_SECRET);
    expect(repeat.json).toMatchObject({ id, duplicate: true });
    // Listed and exported as a copy.
    const listed = await api(`/events?transferId=${encodeURIComponent(body.result.id)}`);
    expect(listed.json.items.map((e: { id: number; edit: unknown }) => [e.id, e.edit !== null])).toEqual([[copy.id, true], [id, false]]);
    const exported = await app.store.listEventsForExport({ transferId: body.result.id }, 10);
    expect(exported.map((e) => e.edit?.editedFrom ?? null)).toEqual([null, id]);
  });

  it('refuses a body that fails the event schema unless it is meant to be invalid, then stores it marked invalid', async () => {
    const sink = await startSink();
    const fixture = await startAdminFixture({ rules: { 'fwd.yaml': ruleYaml('fwd', sink.url) } });
    const body = fixture.transfer();
    const id = await fixture.ingest(body);
    const broken = JSON.stringify({ ...body, result: { ...body.result, quantity: 'many' } });
    const refused = await fixture.api(`/events/${id}/edited-replay`, { method: 'POST', body: { body: broken } });
    expect(refused.status).toBe(422);
    expect(refused.json.error).toMatchObject({ code: 'invalid_payload', details: { issues: [expect.objectContaining({ path: 'result.quantity' })] } });
    const dryRun = await fixture.api(`/events/${id}/edited-replay`, { method: 'POST', body: { body: broken, dryRun: true } });
    expect(dryRun.status).toBe(200);
    expect(dryRun.json).toMatchObject({ dryRun: true, event: null, deliveries: [], changes: [{ path: 'result.quantity', change: 'changed', after: 'many' }] });
    expect(dryRun.json.issues).toEqual([expect.objectContaining({ path: 'result.quantity' })]);
    expect((await fixture.app.store.listEvents({}, { limit: 10 })).items).toHaveLength(1);
    const notJson = await fixture.api(`/events/${id}/edited-replay`, { method: 'POST', body: { body: '{"event":', meantInvalid: true } });
    expect(notJson.json.error.code).toBe('invalid_json');

    const stored = await fixture.api(`/events/${id}/edited-replay`, { method: 'POST', body: { body: broken, meantInvalid: true, via: 'console' } });
    expect(stored.status).toBe(201);
    expect(stored.json.event).toMatchObject({ validation: 'invalid', edit: { via: 'console' } });
    await sink.waitFor(2);
  });

  it('applies one chosen rule even when its filter does not match, and says so; or sends to a URL as a recorded delivery', async () => {
    const sink = await startSink();
    const target = await startSink();
    const fixture = await startAdminFixture({ rules: { 'big.yaml': ruleYaml('big', sink.url, 'where:\n  result.quantity: { $gt: 100 }\n') } });
    const body = fixture.transfer({ quantity: 1 });
    const id = await fixture.ingest(body);
    const text = JSON.stringify(body);

    const forced = await fixture.api(`/events/${id}/edited-replay`, { method: 'POST', body: { body: text, ruleId: 'big' } });
    expect(forced.json.appliedWithoutMatch).toBe('where result.quantity $gt 100: found 1');
    expect(forced.json.deliveries).toEqual([expect.objectContaining({ ruleId: 'big' })]);
    await sink.waitFor(1);

    const toUrl = await fixture.api(`/events/${id}/edited-replay`, { method: 'POST', body: { body: text, to: `${target.url}/qa` } });
    expect(toUrl.status).toBe(201);
    expect(toUrl.json.ruleSetHash).toMatch(/^url-[0-9a-f]{12}$/);
    expect(toUrl.json.planned).toEqual([expect.objectContaining({ destination: `${target.url}/qa` })]);
    const [received] = await target.waitFor(1);
    expect(received!.path).toBe('/hooks/qa');
    expect(received!.headers['x-service-signature']).toBeUndefined();
    const delivered = await eventually(async () => {
      const d = await fixture.app.store.getDelivery(toUrl.json.deliveries[0].id);
      return d?.state === 'delivered' ? d : null;
    });
    expect(delivered.attemptLog).toHaveLength(1);
    expect((await fixture.app.store.getEvent(toUrl.json.event.id))?.edit?.number).toBe(2);
  });

  it('sends an edited copy to a URL through the network guard: a refused address is dead-lettered, not sent', async () => {
    const fixture = await startAdminFixture({ rules: {} });
    const body = fixture.transfer();
    const id = await fixture.ingest(body);
    // 127.0.0.2 is loopback outside the allowed 127.0.0.1/32: the guard refuses it before any connection.
    const reply = await fixture.api(`/events/${id}/edited-replay`, { method: 'POST', body: { body: JSON.stringify(body), to: 'http://127.0.0.2:9/qa' } });
    expect(reply.status, reply.text).toBe(201);
    expect(reply.json.deliveries).toEqual([expect.objectContaining({ eventId: reply.json.event.id, origin: 'replay' })]);
    const dead = await eventually(async () => {
      const d = await fixture.app.store.getDelivery(reply.json.deliveries[0].id);
      return d?.state === 'dead' ? d : null;
    });
    expect(dead.attemptLog).toEqual([expect.objectContaining({ errorCode: 'destination_refused', status: null })]);
    expect(dead.deadReason).toMatch(/127\.0\.0\.2/);
  });
});
