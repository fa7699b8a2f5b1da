import { afterAll, afterEach, expect, it } from 'vitest';
import { sampleTransferSucceeded } from '../../../src/samples/transfer-succeeded.js';
import { describeEachBackend } from '../../helpers/backends.js';
import { postSigned } from '../../helpers/http.js';
import { startTestReceiver, TEST_SECRET, type TestReceiver } from '../../helpers/receiver.js';
import { eventually, rulesDirWith, TEST_DELIVERY } from '../../helpers/rules.js';
import { removeTempDirs } from '../../helpers/temp-dir.js';
import { startWebhookSink, type WebhookSink } from '../../helpers/webhook-sink.js';

const running: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((r) => r.close()));
});
afterAll(() => removeTempDirs());

const SPACING_MS = 250; // maxPerSecond: 4
const POISON = 'poison@example.com';

/** A destination that is down (503) until `recover()`, and always refuses the poison event with a 400. */
async function flakySink(): Promise<{ sink: WebhookSink; recover(): void; recoveredAt(): number }> {
  let down = true;
  let recoveredAt = 0;
  const sink = await startWebhookSink((_i, request) => (request.rawBody.includes(POISON) ? 400 : down ? 503 : 200));
  running.push(sink);
  return { sink, recover: () => { down = false; recoveredAt = Date.now(); }, recoveredAt: () => recoveredAt };
}

const rule = (url: string): string =>
  `id: flaky\non: [transfer:succeeded]\nto:\n  url: ${url}\nretry:\n  schedule: [0s, 50ms]\nredrive:\n  maxPerSecond: ${1000 / SPACING_MS}\n`;

describeEachBackend('redrive after an outage', (backend) => {
  it('sends exactly the retryable dead letters again, once each, oldest first, at the bounded rate; a 4xx stays dead', async () => {
    const { sink, recover, recoveredAt } = await flakySink();
    const app: TestReceiver = await startTestReceiver({
      ...(await backend.storage()),
      rulesDir: rulesDirWith({ 'flaky.yaml': rule(sink.url) }),
      // The circuit opens at the last of the 8 failed attempts (4 deliveries, 2 each): every retryable dead
      // letter is in, and no probe goes before the destination recovers (the first waits for the pause).
      delivery: { ...TEST_DELIVERY, failureThreshold: 8, coolDownMs: 4_000, redrive: { checkIntervalMs: 100 } },
    });
    running.unshift(app);
    const eventIds: number[] = [];
    // The 400 comes first: an answer of the destination's own ends a run of failures, so the outage begins after it.
    for (const email of [POISON, 'a@example.com', 'b@example.com', 'c@example.com', 'd@example.com']) {
      const reply = await postSigned(app.webhookUrl(), sampleTransferSucceeded({ email }), TEST_SECRET);
      eventIds.push(reply.json.id as number);
    }
    const dead = await eventually(async () => {
      const { items } = await app.store.listDeliveries({ state: 'dead' }, { limit: 10 });
      return items.length === 5 ? items : null;
    }, 30_000, 'every delivery dead');
    const [outage] = await eventually(() => app.store.listOutages({ open: true, limit: 10 }).then((o) => (o.length > 0 ? o : null)), 10_000, 'the outage');
    expect(outage).toMatchObject({ destination: new URL(sink.url).origin, closedAt: null });
    const scrape = await app.metrics!.scrape();
    expect(scrape).toContain(`hookrelay_destination_failing{destination="${new URL(sink.url).origin}"} 1`);
    expect(scrape).toContain('hookrelay_rule_dead_letters{rule="flaky"} 5');

    const poison = dead.find((d) => d.eventId === eventIds[0])!;
    const retryable = dead.filter((d) => d !== poison).map((d) => d.id).sort((a, b) => a - b);
    const before = sink.received.length;
    recover(); // no new traffic: a probe finds out
    await eventually(async () => {
      const { items } = await app.store.listDeliveries({ state: 'delivered' }, { limit: 10 });
      return items.length === 4;
    }, 30_000, 'the redriven dead letters delivered');

    const after = sink.received.slice(before).filter((r) => r.receivedAt >= recoveredAt());
    expect(after.map((r) => r.headers['x-hookrelay-delivery'])).toEqual(retryable.map((id) => `dlv_${id}`)); // once each, oldest first
    expect(after.some((r) => r.rawBody.includes(POISON))).toBe(false);
    // The probe goes first; the rest are due one per SPACING_MS, and none arrives before it is due.
    const redrives = await Promise.all(retryable.slice(1).map(async (id) => (await app.store.getDelivery(id))!.redrives.at(-1)!));
    expect(redrives.map((r) => r.dueAt - redrives[0]!.dueAt)).toEqual(redrives.map((_, i) => i * SPACING_MS));
    redrives.forEach((r, i) => expect(after[i + 1]!.receivedAt).toBeGreaterThanOrEqual(r.dueAt));
    expect((await app.store.getDelivery(poison.id))!.state).toBe('dead');

    const probe = (await app.store.getDelivery(retryable[0]!))!;
    expect(probe.redrives).toEqual([expect.objectContaining({ outageId: outage!.id, kind: 'probe' })]);
    expect(probe.attemptLog.at(-1)).toMatchObject({ status: 200, outcome: 'delivered' });
    const redriven = (await app.store.getDelivery(retryable[1]!))!;
    expect(redriven.redrives).toEqual([expect.objectContaining({ outageId: outage!.id, kind: 'redrive' })]);
    expect(await app.store.listOutages({ limit: 10 })).toEqual([expect.objectContaining({ id: outage!.id, closedAt: expect.any(Number), redriven: 4 })]);
    const recovered = await app.metrics!.scrape();
    expect(recovered).not.toContain('hookrelay_destination_failing{');
    expect(recovered).toContain('hookrelay_rule_dead_letters{rule="flaky"} 1');
  }, 60_000);

  it('leaves dead letters alone for rules that did not opt in', async () => {
    const { sink, recover } = await flakySink();
    const app = await startTestReceiver({
      ...(await backend.storage()),
      rulesDir: rulesDirWith({ 'r.yaml': `id: plain\non: [transfer:succeeded]\nto:\n  url: ${sink.url}\nretry:\n  schedule: [0s]\n` }),
      delivery: { ...TEST_DELIVERY, failureThreshold: 2, coolDownMs: 300, redrive: { enabled: false, checkIntervalMs: 100 } },
    });
    running.unshift(app);
    for (const email of ['a@example.com', 'b@example.com']) await postSigned(app.webhookUrl(), sampleTransferSucceeded({ email }), TEST_SECRET);
    await eventually(async () => (await app.store.listDeliveries({ state: 'dead' }, { limit: 10 })).items.length === 2, 20_000, 'both dead');
    await eventually(async () => (await app.store.listOutages({ open: true, limit: 1 })).length === 1, 10_000, 'the outage recorded');
    recover();
    const received = sink.received.length;
    // A new event closes the outage (a success); the old dead letters stay dead.
    await postSigned(app.webhookUrl(), sampleTransferSucceeded({ email: 'c@example.com' }), TEST_SECRET);
    await eventually(async () => (await app.store.listOutages({ open: true, limit: 1 })).length === 0, 20_000, 'the outage closed');
    expect(sink.received.length).toBe(received + 1);
    expect((await app.store.listDeliveries({ state: 'dead' }, { limit: 10 })).items).toHaveLength(2);
  }, 60_000);

  it('a redriven delivery gets one more pass of its rule\'s retry schedule, under the same delivery id', async () => {
    const answers = [503, 503, 503, 200];
    const sink = await startWebhookSink((i) => answers[i] ?? 200);
    running.push(sink);
    const app = await startTestReceiver({
      ...(await backend.storage()),
      // redrive: false, so no probe interferes; the store's redrive is called directly below.
      rulesDir: rulesDirWith({ 'r.yaml': `id: r\non: [transfer:succeeded]\nto:\n  url: ${sink.url}\nretry:\n  schedule: [0s, 50ms]\nredrive: false\n` }),
      delivery: { ...TEST_DELIVERY, failureThreshold: 100 },
    });
    running.unshift(app);
    const origin = new URL(sink.url).origin;
    await app.store.openOutage(origin, Date.now() - 1);
    await postSigned(app.webhookUrl(), sampleTransferSucceeded(), TEST_SECRET);
    const dead = await eventually(async () => (await app.store.listDeliveries({ state: 'dead' }, { limit: 1 })).items[0], 20_000, 'dead');
    const closed = await app.store.closeOutage(origin, new Map([['r', 10]]));
    expect(closed!.redriven).toEqual([dead.id]);
    app.delivery!.wake();
    const detail = await eventually(async () => {
      const d = await app.store.getDelivery(dead.id);
      return d?.state === 'delivered' ? d : null;
    }, 20_000, 'delivered');
    // Two attempts ran out its schedule; the redrive's pass retried its first failure instead of dead-lettering it.
    expect(detail.attemptLog.map((a) => [a.attempt, a.status, a.outcome])).toEqual([[1, 503, 'pending'], [2, 503, 'dead'], [3, 503, 'pending'], [4, 200, 'delivered']]);
    expect(new Set(sink.received.map((r) => r.headers['x-hookrelay-delivery']))).toEqual(new Set([`dlv_${dead.id}`]));
  }, 60_000);
});
