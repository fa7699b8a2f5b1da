import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, expect, it } from 'vitest';
import { sampleTransferSucceeded } from '../../../src/samples/transfer-succeeded.js';
import { describeEachBackend, type TestBackend } from '../../helpers/backends.js';
import { postSigned, send } from '../../helpers/http.js';
import { startTestReceiver, TEST_SECRET, type TestReceiver } from '../../helpers/receiver.js';
import { rulesDirWith, TEST_DELIVERY } from '../../helpers/rules.js';
import { removeTempDirs } from '../../helpers/temp-dir.js';
import { startWebhookSink, type WebhookSink } from '../../helpers/webhook-sink.js';
import { ruleYaml } from './admin-fixture.js';

const ENV = { CRM_TOKEN: 'crm-token-resolved-value', CRM_SECRET: 'crm-signing-resolved-value' };
/** Three clauses the sample event fails, and one it passes. */
const THREE_FAILING = `where:
  result.paymentMethod: BUY_WITH_CRYPTO
  result.quantity: { $gte: 5 }
  result.couponCode: { $exists: true }
  result.email: { $regex: "@example\\\\.com$" }
`;

let receiver: TestReceiver | undefined;
let sink: WebhookSink | undefined;
afterEach(async () => {
  await receiver?.close();
  await sink?.close();
  receiver = sink = undefined;
});
afterAll(() => removeTempDirs());

async function start(backend: TestBackend, rules: Record<string, string>): Promise<{ app: TestReceiver; rulesDir: string; api: (path: string) => ReturnType<typeof send> }> {
  const rulesDir = rulesDirWith(rules);
  // The guard's DNS lookup is the test's: one name is internal, every other resolves to loopback.
  const lookup = async (name: string) => [{ address: name === 'crm.internal.test' ? '10.0.0.7' : '127.0.0.1' }];
  const app = await startTestReceiver({ rulesDir, delivery: TEST_DELIVERY, ...(await backend.storage()) }, { env: ENV, lookup });
  receiver = app;
  return { app, rulesDir, api: (path) => send(`${app.url}/admin/api${path}`, { headers: { authorization: `Bearer ${app.adminToken}` } }) };
}

async function ingest(app: TestReceiver, body: unknown): Promise<number> {
  const reply = await postSigned(app.webhookUrl(), body, TEST_SECRET);
  expect(reply.status, reply.text).toBe(200);
  return reply.json.id as number;
}

describeEachBackend('GET /admin/api/events/:id/explain', (backend) => {
  it('explains every rule: all three failing clauses with the values found, a match with what it would send, a disabled rule, a refused destination', async () => {
    sink = await startWebhookSink();
    const { app, api } = await start(backend, {
      'a-fulfil.yaml': ruleYaml('fulfil', `${sink.url}/fulfil`, 'transform: \'{ "email": result.email }\'\n'),
      'b-crypto.yaml': ruleYaml('crypto-only', `${sink.url}/crypto`, THREE_FAILING),
      'c-off.yaml': ruleYaml('switched-off', `${sink.url}/off`, 'enabled: false\n'),
      'd-crm.yaml': ruleYaml(
        'crm',
        'http://crm.internal.test/hook',
        '  headers: { Authorization: "Bearer ${CRM_TOKEN}" }\nsign: { scheme: hmac-sha256-hex, secret: "${CRM_SECRET}" }\n',
      ),
    });
    const body = sampleTransferSucceeded({ email: 'ann@example.com', quantity: 2 });
    const id = await ingest(app, body);

    const reply = await api(`/events/${id}/explain`);
    expect(reply.status, reply.text).toBe(200);
    const explanation = reply.json;
    expect(explanation).toMatchObject({ ruleSetHash: app.rules.current().hash, event: { id, source: 'checkout', event: 'transfer:succeeded' }, ruleSetNote: null });
    expect(explanation.plannedUnder).toEqual([app.rules.current().hash]);
    expect(explanation.matchedRuleIds).toEqual(['fulfil', 'crm']);
    const byId = Object.fromEntries(explanation.rules.map((rule: { ruleId: string }) => [rule.ruleId, rule]));

    const crypto = byId['crypto-only'];
    expect(crypto.matched).toBe(false);
    expect(crypto.failing).toEqual([
      'where result.paymentMethod $eq "BUY_WITH_CRYPTO": found "BUY_WITH_CARD"',
      'where result.quantity $gte 5: found 2',
      'where result.couponCode $exists true: absent',
    ]);
    expect(crypto.where.map((c: { pass: boolean }) => c.pass)).toEqual([false, false, false, true]);
    expect(crypto.where[3]).toMatchObject({ path: 'result.email', operator: '$regex', found: 'ann@example.com', pass: true });

    expect(byId.fulfil).toMatchObject({ matched: true, failing: [], notes: [], destination: { checked: true, allowed: true, addresses: ['127.0.0.1'] } });
    expect(byId.fulfil.outgoing).toMatchObject({ method: 'POST', url: `${sink.url}/fulfil`, body: '{"email":"ann@example.com"}', headers: { 'content-type': 'application/json' } });

    expect(byId['switched-off']).toMatchObject({ enabled: false, matched: false, clausesPass: true, notes: ['the rule is disabled; it would match if it were enabled'] });

    const crm = byId.crm;
    expect(crm).toMatchObject({ matched: true, destination: { checked: true, allowed: false } });
    expect(crm.notes[0]).toMatch(/network guard refuses the destination \(10\.0\.0\.7 is /);
    expect(crm.outgoing.headers).toMatchObject({ Authorization: 'Bearer ${CRM_TOKEN}', 'X-Service-Signature': expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(crm.outgoing.signing).toEqual({ scheme: 'hmac-sha256-hex', secret: '${CRM_SECRET}', header: 'X-Service-Signature' });
    for (const secret of Object.values(ENV)) expect(reply.text).not.toContain(secret);
  });

  it('explains one rule with ruleId; an unknown rule or event is a 404', async () => {
    const { app, api } = await start(backend, { 'a.yaml': ruleYaml('a', 'http://127.0.0.1:9/a'), 'b.yaml': ruleYaml('b', 'http://127.0.0.1:9/b', THREE_FAILING) });
    const id = await ingest(app, sampleTransferSucceeded());
    const one = await api(`/events/${id}/explain?ruleId=b`);
    expect(one.status).toBe(200);
    expect(one.json.rules.map((r: { ruleId: string }) => r.ruleId)).toEqual(['b']);
    expect(one.json.rules[0].failing).toHaveLength(3);
    expect((await api(`/events/${id}/explain?ruleId=nope`)).json.error).toMatchObject({ code: 'not_found', details: { ruleId: 'nope' } });
    expect((await api(`/events/${id + 100}/explain`)).status).toBe(404);
    expect((await api(`/events/${id}/explain?rule=b`)).status).toBe(400); // misspelt parameter
  });

  it('is in the OpenAPI document, the clause tree as a recursive schema', async () => {
    const { api } = await start(backend, {});
    const doc = (await api('/openapi.json')).json;
    const operation = doc.paths['/events/{id}/explain'].get;
    expect(operation.parameters.map((p: { name: string }) => p.name)).toEqual(['id', 'ruleId']);
    expect(operation.responses['200'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/EventExplanation' });
    expect(doc.components.schemas.ExplainClause.properties.children.items).toEqual({ $ref: '#/components/schemas/ExplainClause' });
  });

  it('names the rule set it used, and says when the stored deliveries were planned under another one', async () => {
    const { app, rulesDir, api } = await start(backend, { 'a.yaml': ruleYaml('a', 'http://127.0.0.1:9/a', 'retry:\n  schedule: [1h]\n') });
    const id = await ingest(app, sampleTransferSucceeded());
    const before = app.rules.current().hash;
    writeFileSync(join(rulesDir, 'a.yaml'), ruleYaml('a', 'http://127.0.0.1:9/a', `retry:\n  schedule: [1h]\n${THREE_FAILING}`));
    await app.rules.check();
    const after = app.rules.current().hash;
    expect(after).not.toBe(before);

    const reply = await api(`/events/${id}/explain`);
    expect(reply.json).toMatchObject({ ruleSetHash: after, plannedUnder: [before], matchedRuleIds: [] });
    expect(reply.json.ruleSetNote).toContain(`planned under rule set ${before}, not the current ${after}`);
  });
});
