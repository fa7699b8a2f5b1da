import { afterAll, afterEach, expect, it, onTestFinished } from 'vitest';
import { describeEachBackend } from '../../helpers/backends.js';
import { eventually } from '../../helpers/rules.js';
import { removeTempDirs } from '../../helpers/temp-dir.js';
import { startWebhookSink, type ReceivedWebhook } from '../../helpers/webhook-sink.js';
import { closeAll, fixtureOn, ruleYaml, startSink, type AdminFixture } from './admin-fixture.js';

afterEach(closeAll);
afterAll(() => removeTempDirs());

const transferId = (request: ReceivedWebhook): string => JSON.parse(request.rawBody.toString()).result.id;

/** The only delivery of event `eventId`, as GET /deliveries/:id answers it, once `ready` holds for it. */
async function deliveryOf(fixture: AdminFixture, eventId: number, ready: (d: any) => boolean, what: string): Promise<any> {
  return eventually(async () => {
    const [listed] = (await fixture.api(`/deliveries?eventId=${eventId}`)).json.items;
    if (!listed) return null;
    const detail = (await fixture.api(`/deliveries/${listed.id}`)).json;
    return ready(detail) ? detail : null;
  }, 15_000, what);
}

describeEachBackend('why a pending delivery waits (wait)', (backend) => {
  const startAdminFixture = fixtureOn(backend);

  it('on the retry schedule: which attempt of how many, and when; the same in the event, the list and the detail', async () => {
    const sink = await startSink(() => 503);
    const fixture = await startAdminFixture({
      rules: { 'later.yaml': ruleYaml('later', sink.url, 'retry:\n  schedule: [0s, 1h]\n') },
      delivery: { failureThreshold: 1_000 },
    });
    const eventId = await fixture.ingest();
    const delivery = await deliveryOf(fixture, eventId, (d) => d.attempts === 1 && d.state === 'pending', 'the first attempt failed');
    expect(delivery.wait).toEqual({
      reason: 'retry_schedule',
      until: delivery.nextAttemptAt,
      since: null,
      message: 'attempt 2 of 2 on the retry schedule (0s, 1h)',
      attempt: { next: 2, of: 2 },
      blockedBy: null,
      node: null,
    });
    expect(Date.parse(delivery.wait.until) - Date.now()).toBeGreaterThan(30 * 60_000);
    expect((await fixture.api(`/events/${eventId}`)).json.deliveries[0].wait).toEqual(delivery.wait);
    expect((await fixture.api(`/deliveries?eventId=${eventId}`)).json.items[0].wait).toEqual(delivery.wait);
    const delivered = await startAdminFixture({ rules: { 'ok.yaml': ruleYaml('ok', (await startSink()).url) } });
    const okEvent = await delivered.ingest();
    expect((await deliveryOf(delivered, okEvent, (d) => d.state === 'delivered', 'delivered')).wait).toBeNull();
  });

  it('behind a paused destination: the circuit is open on this node until a time, since the outage began', async () => {
    const sink = await startSink(() => 503);
    const fixture = await startAdminFixture({
      rules: { 'down.yaml': ruleYaml('down', sink.url, 'retry:\n  schedule: [0s, 1h]\n') },
      delivery: { failureThreshold: 2, coolDownMs: 3_600_000 },
    });
    await fixture.ingest();
    await fixture.ingest();
    await sink.waitFor(2);
    const third = await fixture.ingest();
    const delivery = await deliveryOf(fixture, third, (d) => d.wait?.reason === 'circuit_open' && d.wait.since !== null, 'the third delivery held by the circuit');
    const [destination] = (await fixture.api('/destinations')).json.destinations;
    const [outage] = (await fixture.api('/outages?open=true')).json.items;
    expect(delivery).toMatchObject({ attempts: 0, state: 'pending' });
    expect(delivery.wait).toEqual({
      reason: 'circuit_open',
      until: destination.pausedUntil,
      since: outage.openedAt,
      message: expect.stringContaining(`the circuit for ${new URL(sink.url).origin} is open on this node`),
      attempt: { next: 1, of: 2 },
      blockedBy: null,
      node: fixture.app.node.id,
    });
    expect(sink.received).toHaveLength(2);
  });

  it('behind the failing first delivery of its order key: which one, since when, and its next attempt', async () => {
    const failing = new Set<string>();
    const sink = await startWebhookSink((_i, request) => (failing.has(transferId(request)) ? 503 : 200));
    onTestFinished(() => sink.close());
    const fixture = await startAdminFixture({
      rules: { 'ord.yaml': ruleYaml('ord', sink.url, 'order:\n  key: result.checkoutId\nretry:\n  schedule: [0s, 1h]\n') },
      delivery: { failureThreshold: 1_000 },
    });
    const first = fixture.transfer();
    failing.add(String(first.result.id));
    const headEvent = await fixture.ingest(first);
    const head = await deliveryOf(fixture, headEvent, (d) => d.attempts === 1, 'the head failed');
    const behindEvent = await fixture.ingest(fixture.transfer({ checkoutId: String(first.result.checkoutId) }));
    const behind = await deliveryOf(fixture, behindEvent, (d) => d.wait?.reason === 'order_blocked', 'the second delivery of the key waiting');
    const [key] = (await fixture.api('/rules/ord/blocked-keys')).json.blockedKeys;
    expect(behind.wait).toEqual({
      reason: 'order_blocked',
      until: head.nextAttemptAt,
      since: key.head.blockedSince,
      message: `waits behind delivery #${head.id}, the failing first delivery of its order key "${first.result.checkoutId}": it goes once #${head.id} is delivered or dead-lettered`,
      attempt: { next: 1, of: 2 },
      blockedBy: head.id,
      node: null,
    });
    expect(head.wait.reason).toBe('retry_schedule');
  });

  it('at the destination\'s concurrency limit on this node: waiting for a slot', async () => {
    const sink = await startSink(() => 'hang');
    const fixture = await startAdminFixture({
      rules: { 'one.yaml': ruleYaml('one', sink.url, 'concurrency: 1\ntimeout: 2m\n') },
      delivery: { failureThreshold: 1_000 },
    });
    await fixture.ingest();
    await sink.waitFor(1);
    const second = await fixture.ingest();
    const delivery = await deliveryOf(fixture, second, (d) => d.wait?.reason === 'concurrency', 'the second delivery waiting for a slot');
    expect(delivery.wait).toMatchObject({ attempt: { next: 1, of: 8 }, node: fixture.app.node.id, message: expect.stringContaining('1 attempts in flight on this node, its limit now (ceiling 1)') });
    expect(sink.received).toHaveLength(1);
  });

  it('before its first attempt, which the schedule delays: a schedule step, even at a busy destination', async () => {
    const sink = await startSink(() => 'hang');
    const fixture = await startAdminFixture({
      rules: {
        'one.yaml': ruleYaml('one', sink.url, 'concurrency: 1\ntimeout: 2m\n'),
        'later.yaml': ruleYaml('later', sink.url, 'retry:\n  schedule: [1h]\n'),
      },
      delivery: { failureThreshold: 1_000 },
    });
    const eventId = await fixture.ingest();
    await sink.waitFor(1);
    // The first rule's attempt holds the destination's only slot until the test ends.
    const later = (await fixture.api(`/deliveries?eventId=${eventId}`)).json.items.find((d: any) => d.ruleId === 'later');
    const detail = (await fixture.api(`/deliveries/${later.id}`)).json;
    expect((await fixture.api('/destinations')).json.destinations[0]).toMatchObject({ inFlight: 1, limit: 1 });
    expect(detail.wait).toMatchObject({ reason: 'retry_schedule', until: detail.nextAttemptAt, attempt: { next: 1, of: 1 }, message: 'attempt 1 of 1 on the retry schedule (1h)' });
    expect(sink.received).toHaveLength(1);
  });
});
