import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { send } from '../../helpers/http.js';
import { eventually } from '../../helpers/rules.js';
import { removeTempDirs } from '../../helpers/temp-dir.js';
import { startWebhookSink, type ReceivedWebhook } from '../../helpers/webhook-sink.js';
import { closeAll, ruleYaml, startAdminFixture } from '../admin/admin-fixture.js';

afterEach(closeAll);
afterAll(() => removeTempDirs());

const transferOf = (request: ReceivedWebhook): { id: string; checkoutId: string } => JSON.parse(request.rawBody.toString()).result;

describe('a rule with order', () => {
  it('shows a blocked key with its head and the deliveries behind it, in the admin API and /metrics; other keys flow', async () => {
    const failing = new Set<string>();
    const sink = await startWebhookSink((_i, request) => (failing.has(transferOf(request).id) ? 503 : 200));
    const { api, ingest, transfer, app } = await startAdminFixture({
      rules: { 'ord.yaml': ruleYaml('ord', sink.url, "order:\n  key: result.checkoutId\n  maxBlockedFor: 1h\nretry:\n  schedule: [0s, 1h]\n") },
    });
    const blocked = transfer();
    const key = String(blocked.result.checkoutId);
    failing.add(String(blocked.result.id));
    const head = await ingest(blocked);
    const behind = [transfer({ checkoutId: key }), transfer({ checkoutId: key })];
    for (const body of behind) await ingest(body);
    const other = transfer();
    await ingest(other);
    await eventually(() => sink.received.some((r) => transferOf(r).id === other.result.id), 10_000, 'the other key delivered');

    const reply = await eventually(async () => {
      const r = await api('/rules/ord/blocked-keys');
      return r.json.blockedKeys?.length === 1 ? r : null;
    }, 10_000, 'a blocked key');
    expect(reply.status).toBe(200);
    expect(reply.json).toEqual({
      ruleId: 'ord',
      order: { key: 'result.checkoutId', maxBlockedForMs: 3_600_000, onBlockedTimeout: 'dead-letter' },
      blockedKeys: [{
        key, overdue: false, waiting: 2,
        head: { deliveryId: expect.any(Number), eventId: head, attempts: 1, blockedSince: expect.any(String), nextAttemptAt: expect.any(String), lastStatus: 503, lastError: null },
      }],
    });
    // Nothing behind the failing head was sent.
    expect(sink.received.filter((r) => transferOf(r).checkoutId === key).map((r) => transferOf(r).id)).toEqual([blocked.result.id]);
    const metrics = (await send(`${app.url}/metrics`)).text;
    expect(metrics).toMatch(/^hookrelay_ordered_keys_blocked\{rule="ord"\} 1$/m);
    expect((await api('/rules/nope/blocked-keys')).status).toBe(404);
    await sink.close();
  });

  it('dead-letters a head that blocked its key past maxBlockedFor, then sends the rest of the key in order', async () => {
    const failing = new Set<string>();
    const sink = await startWebhookSink((_i, request) => (failing.has(transferOf(request).id) ? 503 : 200));
    const { ingest, transfer, app } = await startAdminFixture({
      rules: { 'ord.yaml': ruleYaml('ord', sink.url, "order:\n  key: result.checkoutId\n  maxBlockedFor: 600ms\nretry:\n  schedule: [0s, 100ms, 100ms, 100ms, 100ms, 100ms, 100ms, 100ms, 100ms, 100ms, 100ms, 100ms, 100ms, 100ms]\n") },
      // The head's failures must not open the circuit of the destination the rest of the key goes to.
      delivery: { failureThreshold: 1_000 },
    });
    const first = transfer();
    const key = String(first.result.checkoutId);
    failing.add(String(first.result.id));
    const headId = await ingest(first);
    const rest = [transfer({ checkoutId: key }), transfer({ checkoutId: key })];
    for (const body of rest) await ingest(body);
    const [dead] = await eventually(async () => {
      const { items } = await app.store.listDeliveries({ state: 'dead' }, { limit: 10 });
      return items.length > 0 ? items : null;
    }, 10_000, 'the head dead-lettered');
    expect(dead).toMatchObject({ eventId: headId, deadReason: expect.stringContaining('blocked its order key for longer than 600 ms') });
    await eventually(async () => (await app.store.outboxStats()).pending === 0, 10_000, 'the rest delivered');
    const sent = sink.received.map((r) => transferOf(r).id);
    // Blocked for 600 ms with a retry every 100 ms: several attempts, then the others in order.
    expect(sent.filter((id) => id === first.result.id).length).toBeGreaterThan(2);
    expect(sent.filter((id) => id !== first.result.id)).toEqual(rest.map((b) => b.result.id));
    expect(sent.lastIndexOf(first.result.id)).toBeLessThan(sent.indexOf(rest[0]!.result.id));
    await sink.close();
  });

  it('dead-letters a head at maxBlockedFor even while its destination\'s circuit is open', async () => {
    const sink = await startWebhookSink(() => 503);
    const { ingest, transfer, app } = await startAdminFixture({
      rules: { 'ord.yaml': ruleYaml('ord', sink.url, "order:\n  key: result.checkoutId\n  maxBlockedFor: 800ms\nretry:\n  schedule: [0s, 50ms, 50ms, 50ms, 50ms, 50ms, 50ms, 50ms, 50ms, 50ms]\n") },
      // Two failures open the circuit for 30 s, long past the key's bound.
      delivery: { failureThreshold: 2, coolDownMs: 30_000 },
    });
    const headId = await ingest(transfer());
    const [dead] = await eventually(async () => {
      const { items } = await app.store.listDeliveries({ state: 'dead' }, { limit: 10 });
      return items.length > 0 ? items : null;
    }, 10_000, 'the head dead-lettered while the circuit is open');
    expect(dead).toMatchObject({ eventId: headId, deadReason: expect.stringContaining('blocked its order key for longer than 800 ms') });
    expect(sink.received.length).toBeLessThan(5);
    await sink.close();
  });

  it('keep-blocked: never dead-letters the head for a retryable failure, reports the key overdue, then moves on once it is delivered', async () => {
    const failing = new Set<string>();
    const sink = await startWebhookSink((_i, request) => (failing.has(transferOf(request).id) ? 503 : 200));
    const { api, ingest, transfer, app } = await startAdminFixture({
      rules: { 'ord.yaml': ruleYaml('ord', sink.url, "order:\n  key: result.checkoutId\n  maxBlockedFor: 200ms\n  onBlockedTimeout: keep-blocked\nretry:\n  schedule: [0s, 100ms]\n") },
    });
    const first = transfer();
    const key = String(first.result.checkoutId);
    failing.add(String(first.result.id));
    await ingest(first);
    const next = transfer({ checkoutId: key });
    await ingest(next);
    // Past its two-step schedule, the head is still retried, and the key is overdue.
    await eventually(() => sink.received.filter((r) => transferOf(r).id === first.result.id).length >= 4, 10_000, 'four attempts of the head');
    const view = await api('/rules/ord/blocked-keys');
    expect(view.json.blockedKeys).toEqual([expect.objectContaining({ key, overdue: true, waiting: 1 })]);
    expect((await app.store.listDeliveries({ state: 'dead' }, { limit: 10 })).items).toEqual([]);
    failing.clear();
    await eventually(async () => (await app.store.outboxStats()).pending === 0, 10_000, 'the key drained');
    const sent = sink.received.map((r) => transferOf(r).id);
    expect(sent.at(-1)).toBe(next.result.id);
    expect(sent.filter((id) => id === next.result.id)).toHaveLength(1);
    await sink.close();
  });
});
