import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, expect, it } from 'vitest';
import { runCli } from '../helpers/cli-process.js';
import { describeEachBackend } from '../helpers/backends.js';
import { createTestDatabase, describeWithPostgres, TEST_POOL, type TestDatabase } from '../helpers/postgres.js';
import { startTestReceiver, TEST_SECRET, type TestReceiver } from '../helpers/receiver.js';
import { eventually, rulesDirWith, TEST_DELIVERY } from '../helpers/rules.js';
import { SAMPLE_CHECKOUT } from '../helpers/sample-checkout.js';
import { makeTempDir, removeTempDirs } from '../helpers/temp-dir.js';
import { startWebhookSink, type WebhookSink } from '../helpers/webhook-sink.js';
import { startMock, type RunningMock } from '../integration/mock-checkout/support/mock-harness.js';

const running: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((r) => r.close()));
});
afterAll(() => removeTempDirs());

const SCHEMA = { intervalMs: 100, disappearAfter: 3 };
const RULE = 'id: no-gift\non: [transfer:succeeded]\nwhere:\n  result.giftMessage: { $exists: false }\nto:\n  url: http://127.0.0.1:9/\n';

const texts = (channel: WebhookSink): string[] => channel.received.map((r) => (JSON.parse(r.rawBody.toString()) as { text: string }).text);

async function purchase(mock: RunningMock, checkoutId: string, drift: string): Promise<{ transferId: string; status: number }> {
  const reply = await mock.call('POST', `/mock/checkout/${checkoutId}/purchase`, { drift });
  expect(reply.status, JSON.stringify(reply.json)).toBe(200);
  return { transferId: reply.json.transfer.id as string, status: reply.json.deliveries[0].status as number };
}

async function eventIdOf(app: TestReceiver, transferId: string): Promise<number> {
  return (await app.store.listEvents({ transferId }, { limit: 1 })).items[0]!.id;
}

describeEachBackend('schema drift end to end', (backend) => {
  it('the mock sends a drifted body: the drift is recorded once, alerted, counted, and listed by the CLI', async () => {
    const channel = await startWebhookSink();
    running.push(channel);
    const app = await startTestReceiver({
      ...(await backend.storage()),
      rulesDir: rulesDirWith({ 'r.yaml': RULE }),
      delivery: TEST_DELIVERY,
      schema: SCHEMA,
      alerts: { url: `${channel.url}/alerts`, dampingMs: 60_000 },
    });
    running.unshift(app);
    const mock = await startMock({ webhookSecret: TEST_SECRET });
    running.push(mock);
    // Learning starts with the events stored after its first pass.
    await eventually(() => app.store.loadSchemaLearning(), 20_000, 'the learner started');
    const created = await mock.call('POST', '/api/v1/checkout', { ...SAMPLE_CHECKOUT, webhookUrls: [app.webhookUrl()] });
    expect(created.status).toBe(200);
    const checkoutId = created.json.result.id as string;

    for (let i = 0; i < 2; i += 1) expect((await purchase(mock, checkoutId, 'none')).status).toBe(200);
    await eventually(async () => (await app.store.listObservedSchemas({}))[0]?.eventsSeen === 2, 20_000, 'two events learned');
    const drifted = await purchase(mock, checkoutId, 'new-field');
    expect(drifted.status).toBe(200);
    await purchase(mock, checkoutId, 'new-field');
    await eventually(async () => (await app.store.listObservedSchemas({}))[0]?.eventsSeen === 4, 20_000, 'four events learned');

    const drifts = await app.store.listDrifts({ limit: 10 });
    expect(drifts).toHaveLength(1);
    expect(drifts[0]).toMatchObject({ source: 'checkout', event: 'transfer:succeeded', kind: 'field_added', path: 'result.giftMessage', after: ['string'], eventId: await eventIdOf(app, drifted.transferId) });

    const alert = await eventually(() => texts(channel).find((t) => t.includes('giftMessage')), 20_000, 'the drift alert');
    expect(alert).toBe(`hookrelay: schema drift: checkout transfer:succeeded: new field result.giftMessage (string) (first event ${drifts[0]!.eventId}); rules whose where reads it: no-gift ${app.adminUrl}/console#/events/${drifts[0]!.eventId}.`);
    expect(texts(channel).filter((t) => t.includes('schema drift'))).toHaveLength(1);

    const metrics = await (await fetch(`${app.adminUrl}/metrics`)).text();
    expect(metrics).toContain('hookrelay_schema_drifts_total{source="checkout",event="transfer:succeeded",kind="field_added"} 1');

    const cli = runCli(['schema', 'drifts', '--url', app.adminUrl, '--token', app.adminToken, '--json']);
    expect((await cli.exited).code, cli.stderr()).toBe(0);
    const listed = JSON.parse(cli.stdout()) as { drifts: { path: string; eventLink: string; rules: { where: string[] } }[] };
    expect(listed.drifts).toMatchObject([{ path: 'result.giftMessage', eventLink: `/console#/events/${drifts[0]!.eventId}`, rules: { where: ['no-gift'], transform: [] } }]);

    // Export pins what was observed; the diff against it is clean, then the drift shows (exit 1, for CI).
    const contractFile = join(makeTempDir(), 'checkout.transfer-succeeded.schema.json');
    const exported = runCli(['schema', 'export', '--url', app.adminUrl, '--token', app.adminToken, '--source', 'checkout', '--event', 'transfer:succeeded', '--out', contractFile]);
    expect((await exported.exited).code, exported.stderr()).toBe(0);
    const clean = runCli(['schema', 'diff', contractFile, '--url', app.adminUrl, '--token', app.adminToken]);
    expect((await clean.exited).code, clean.stdout() + clean.stderr()).toBe(0);
    const contract = JSON.parse(readFileSync(contractFile, 'utf8')) as { properties: { result: { properties: Record<string, unknown> } } };
    delete contract.properties.result.properties.giftMessage;
    writeFileSync(contractFile, JSON.stringify(contract));
    const differs = runCli(['schema', 'diff', contractFile, '--url', app.adminUrl, '--token', app.adminToken]);
    expect((await differs.exited).code).toBe(1);
    expect(differs.stdout()).toContain('+ result.giftMessage: observed (string), not in the contract');

    // A type change fails the spec schema: the sender gets 422, the body is kept in quarantine, and what it
    // showed is learned like any stored body: a second drift, counted (its alert falls in the damping window).
    const retyped = await purchase(mock, checkoutId, 'type-change');
    expect(retyped.status).toBe(422);
    await eventually(async () => (await app.store.listObservedSchemas({}))[0]?.eventsSeen === 5, 20_000, 'the quarantined body learned');
    const held = await app.store.listEvents({ quarantine: 'held' }, { limit: 10 });
    expect(held.items).toHaveLength(1);
    const typeDrifts = (await app.store.listDrifts({ limit: 10 })).filter((d) => d.kind === 'type_changed');
    expect(typeDrifts).toMatchObject([{ path: 'result.totalPriceUsd', eventId: held.items[0]!.id }]);
    expect(typeDrifts[0]!.after).toContain('string');
    const counted = await (await fetch(`${app.adminUrl}/metrics`)).text();
    expect(counted).toContain('hookrelay_schema_drifts_total{source="checkout",event="transfer:succeeded",kind="type_changed"} 1');
  }, 120_000);

  it('a backfill job forgets the observed schema and learns it again from the stored events, with progress', async () => {
    const app = await startTestReceiver({ ...(await backend.storage()), schema: SCHEMA });
    running.unshift(app);
    const mock = await startMock({ webhookSecret: TEST_SECRET });
    running.push(mock);
    // Learning starts with the events stored after the first pass: wait for it, then store three.
    await eventually(() => app.store.loadSchemaLearning(), 20_000, 'the learner started');
    const created = await mock.call('POST', '/api/v1/checkout', { ...SAMPLE_CHECKOUT, webhookUrls: [app.webhookUrl()] });
    for (let i = 0; i < 3; i += 1) await purchase(mock, created.json.result.id as string, 'none');
    await eventually(async () => (await app.store.listObservedSchemas({}))[0]?.eventsSeen === 3, 20_000, 'three events learned');
    const headers = { authorization: `Bearer ${app.adminToken}` };
    const started = await fetch(`${app.adminUrl}/admin/api/schema/backfill`, { method: 'POST', headers });
    expect(started.status).toBe(202);
    const job = (await started.json()) as { id: number; kind: string; total: number };
    expect(job).toMatchObject({ kind: 'schema-backfill', total: 3 });
    const done = await eventually(async () => {
      const current = (await (await fetch(`${app.adminUrl}/admin/api/jobs/${job.id}`, { headers })).json()) as { state: string; processed: number };
      return current.state === 'done' ? current : null;
    }, 30_000, 'the backfill job done');
    expect(done.processed).toBe(3);
    const [schema] = await app.store.listObservedSchemas({});
    expect(schema).toMatchObject({ source: 'checkout', event: 'transfer:succeeded', eventsSeen: 3 });
    expect(schema!.fields.find((f) => f.path === 'result.email')).toMatchObject({ present: 3, example: '"***@example.com"' });
  }, 60_000);
});

let shared: TestDatabase;
describeWithPostgres('schema learning on two nodes of one PostgreSQL database', () => {
  afterAll(() => shared?.drop());

  it('learns each event once: one node holds the lease, both read the same summary', async () => {
    shared = await createTestDatabase();
    const database = { ...TEST_POOL, url: await shared.freshSchemaUrl() };
    const [a, b] = [await startTestReceiver({ database, schema: SCHEMA }), await startTestReceiver({ database, schema: SCHEMA })];
    running.unshift(a, b);
    await eventually(() => a.store.loadSchemaLearning(), 20_000, 'a learner started');
    const mock = await startMock({ webhookSecret: TEST_SECRET });
    running.push(mock);
    // Both nodes receive: the purchases alternate between them.
    for (const node of [a, b, a, b]) {
      const created = await mock.call('POST', '/api/v1/checkout', { ...SAMPLE_CHECKOUT, webhookUrls: [node.webhookUrl()] });
      await purchase(mock, created.json.result.id as string, 'none');
    }
    const created = await mock.call('POST', '/api/v1/checkout', { ...SAMPLE_CHECKOUT, webhookUrls: [b.webhookUrl()] });
    await purchase(mock, created.json.result.id as string, 'new-field');
    await eventually(async () => (await b.store.listObservedSchemas({}))[0]?.eventsSeen === 5, 20_000, 'five events learned');
    // A few more passes on both nodes change nothing: nothing is counted twice.
    await Promise.all([a.schemaLearner!.runOnce(), b.schemaLearner!.runOnce()]);
    const reports = await Promise.all([a.schemaLearner!.runOnce(), b.schemaLearner!.runOnce()]);
    expect(reports.filter((r) => r.skipped)).toHaveLength(1);
    expect((await a.store.listObservedSchemas({}))[0]!.eventsSeen).toBe(5);
    expect(await a.store.listDrifts({ limit: 10 })).toMatchObject([{ kind: 'field_added', path: 'result.giftMessage' }]);
  }, 90_000);
});
