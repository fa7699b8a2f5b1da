import { expect, it } from 'vitest';
import { describeEachBackend } from '../helpers/backends.js';
import { postSigned, send } from '../helpers/http.js';
import { startTestReceiver, TEST_SECRET, type TestReceiver } from '../helpers/receiver.js';
import { eventually, rulesDirWith, TEST_DELIVERY } from '../helpers/rules.js';
import { startWebhookSink, type WebhookSink } from '../helpers/webhook-sink.js';
import { loopbackSuite } from './support/loopback-suite.js';

// All traffic is loopback: the receiver and the sink run in this process on 127.0.0.1.
const { running } = loopbackSuite();

/**
 * `^(a+)+$` against 32 `a`s then `!`: a backtracking engine tries every way to split the `a`s (about a
 * minute here, on the event loop that also acknowledges webhooks and runs this test); RE2 reads it once.
 * The receiver runs in this process, so a stall would stop this test too: it would time out.
 */
const CATASTROPHIC = `${'a'.repeat(32)}!`;

const event = (id: string, s: string) => ({ event: 'x:regex', result: { id, s } });

/** A receiver with `rule` (YAML after its `id`/`on`/`to`) forwarding `x:regex` events to a fresh sink. */
async function receiverWith(storage: Record<string, unknown>, rule: string): Promise<{ app: TestReceiver; sink: WebhookSink }> {
  const sink = await startWebhookSink();
  running.push(sink);
  const rules = rulesDirWith({ 'regex.yaml': `id: by-regex\non: ["x:regex"]\nto:\n  url: ${sink.url}\n${rule}` });
  const app = await startTestReceiver({ ...storage, rulesDir: rules, delivery: TEST_DELIVERY });
  running.push(app);
  return { app, sink };
}

/** The hostile event, /healthz and an ordinary event, all at once: every one is answered. */
async function postAllAtOnce(app: TestReceiver) {
  const [hostile, health, ordinary] = await Promise.all([
    postSigned(app.webhookUrl(), event('hostile', CATASTROPHIC), TEST_SECRET),
    send(`${app.url}/healthz`),
    postSigned(app.webhookUrl(), event('ordinary', 'aaaa'), TEST_SECRET),
  ]);
  expect([hostile.status, health.status, ordinary.status]).toEqual([200, 200, 200]);
  return { hostileId: hostile.json.id as number, ordinaryId: ordinary.json.id as number };
}

const deliveriesOf = async (app: TestReceiver, eventId: number) => (await app.store.listDeliveries({ eventId }, { limit: 10 })).items;

describeEachBackend('a catastrophic regex in a rule does not stall the receiver', (backend) => {
  it('in a where filter: every request is answered and the hostile event is stored and routed correctly', async () => {
    const { app, sink } = await receiverWith(await backend.storage(), 'where:\n  result.s: { $regex: "^(a+)+$" }\n');
    const { hostileId, ordinaryId } = await postAllAtOnce(app);

    expect(await app.store.getEvent(hostileId)).toMatchObject({ event: 'x:regex' });
    expect(await deliveriesOf(app, hostileId)).toEqual([]); // `!` at the end: no match
    expect(await deliveriesOf(app, ordinaryId)).toHaveLength(1);
    const [sent] = await sink.waitFor(1);
    expect(JSON.parse(sent!.rawBody.toString())).toEqual(event('ordinary', 'aaaa'));
  });

  it('in a JSONata transform: every request is answered and both events are delivered with the right verdict', async () => {
    const transform = 'transform: |\n  { "id": result.id, "allA": $contains(result.s, /^(a+)+$/) }\n';
    const { app, sink } = await receiverWith(await backend.storage(), transform);
    const { hostileId, ordinaryId } = await postAllAtOnce(app);

    const received = await sink.waitFor(2);
    const bodies = received.map((request) => JSON.parse(request.rawBody.toString()) as { id: string });
    expect(bodies.sort((a, b) => a.id.localeCompare(b.id))).toEqual([
      { id: 'hostile', allA: false },
      { id: 'ordinary', allA: true },
    ]);
    for (const id of [hostileId, ordinaryId]) {
      await eventually(async () => (await deliveriesOf(app, id))[0]?.state === 'delivered', 5000, `event ${id} to be delivered`);
    }
  });
});
