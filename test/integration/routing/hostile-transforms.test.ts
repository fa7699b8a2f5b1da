import { afterAll, describe, expect, it } from 'vitest';
import { sampleTransferSucceeded } from '../../../src/samples/transfer-succeeded.js';
import type { Delivery } from '../../../src/store/outbox-store.js';
import { describeEachBackend } from '../../helpers/backends.js';
import { postSigned } from '../../helpers/http.js';
import { startTestReceiver, TEST_SECRET } from '../../helpers/receiver.js';
import { eventually, rulesDirWith, TEST_DELIVERY } from '../../helpers/rules.js';
import { removeTempDirs } from '../../helpers/temp-dir.js';
import { startWebhookSink } from '../../helpers/webhook-sink.js';

afterAll(() => removeTempDirs());

const TIME_LIMIT_MS = 500;
/** Heap enough that the long ones meet the time limit, not the heap's (tested with the sandbox). */
const TRANSFORM_LIMITS = { rules: { transform: { timeoutMs: TIME_LIMIT_MS, maxMemoryMb: 256 } } };

/** Each hostile rule takes the events of one quantity, so every event meets one of them and the normal rule. */
const HOSTILE = [
  {
    id: 'doubles-a-string',
    quantity: 1,
    transform: '( $d := function($s, $n) { $n = 0 ? $s : $d($s & $s, $n - 1) }; { "x": $d("01234567", 25) } )',
    reason: 'transform produced at least 268435464 bytes, more than the 1048576 allowed',
  },
  { id: 'long-map', quantity: 2, transform: '$map([1..99999], function($v) { $string($v) & $pad("", 200, "x") })', reason: `transform exceeded its time limit of ${TIME_LIMIT_MS} ms` },
  { id: 'endless-recursion', quantity: 3, transform: '( $loop := function() { $loop() }; $loop() )', reason: `transform exceeded its time limit of ${TIME_LIMIT_MS} ms` },
  { id: 'one-long-built-in', quantity: 4, transform: '$length($pad("", 40000000, "x"))', reason: `transform exceeded its time limit of ${TIME_LIMIT_MS} ms` },
];

const hostileRule = (rule: (typeof HOSTILE)[number], url: string): string =>
  `id: ${rule.id}\non: [transfer:succeeded]\nwhere: { result.quantity: ${rule.quantity} }\ntransform: ${JSON.stringify(rule.transform)}\nto:\n  url: ${url}\n`;

const normalRule = (url: string, extra = ''): string =>
  `id: normal\non: [transfer:succeeded]\ntransform: '{ "email": result.email, "kind": $event, "quantity": result.quantity }'\nto:\n  url: ${url}\n${extra}`;

async function settled(list: () => Promise<Delivery[]>, count: number): Promise<Delivery[]> {
  return eventually(async () => {
    const deliveries = await list();
    return deliveries.length === count && deliveries.every((d) => d.state !== 'pending') ? deliveries : null;
  }, 60_000, `${count} deliveries to settle`);
}

describeEachBackend('a hostile transform costs its own deliveries, never an acknowledgement', (backend) => {
  describe.each([
    { worker: 'in the delivery thread', thread: true },
    { worker: 'on the event loop', thread: false },
  ])('with the worker $worker', ({ thread }) => {
    it('acknowledges every concurrent webhook, dead-letters the hostile deliveries with the reason, and delivers the normal one', async () => {
      const sink = await startWebhookSink();
      const files = Object.fromEntries(HOSTILE.map((rule) => [`${rule.id}.yaml`, hostileRule(rule, sink.url)]));
      const dir = rulesDirWith({ ...files, 'normal.yaml': normalRule(sink.url) });
      const app = await startTestReceiver({ ...(await backend.storage()), ...TRANSFORM_LIMITS, rulesDir: dir, delivery: { ...TEST_DELIVERY, thread } });
      try {
        const bodies = Array.from({ length: 16 }, (_, i) => sampleTransferSucceeded({ quantity: (i % 4) + 1 }));
        const replies = await Promise.all(bodies.map((body) => postSigned(app.webhookUrl(), body, TEST_SECRET)));
        expect(replies.map((reply) => reply.status)).toEqual(bodies.map(() => 200));

        const deliveries = await settled(async () => (await app.store.listDeliveries({}, { limit: 100 })).items, 32);
        for (const rule of HOSTILE) {
          const ofRule = deliveries.filter((d) => d.ruleId === rule.id);
          expect(ofRule.map((d) => ({ state: d.state, deadReason: d.deadReason }))).toEqual(ofRule.map(() => ({ state: 'dead', deadReason: rule.reason })));
          expect(ofRule).toHaveLength(4);
        }
        const normal = deliveries.filter((d) => d.ruleId === 'normal');
        expect(normal.map((d) => d.state)).toEqual(bodies.map(() => 'delivered'));
        type Sent = { email: string; kind: string; quantity: number };
        const byEmail = (a: Sent, b: Sent): number => a.email.localeCompare(b.email) || a.quantity - b.quantity;
        expect(sink.received.map((request) => JSON.parse(request.rawBody.toString()) as Sent).sort(byEmail)).toEqual(
          bodies.map((body) => ({ email: body.result.email as string, kind: 'transfer:succeeded', quantity: body.result.quantity as number })).sort(byEmail),
        );
        const [dead] = HOSTILE.map((rule) => deliveries.find((d) => d.ruleId === rule.id)!);
        const detail = await app.store.getDelivery(dead!.id);
        expect(detail!.attemptLog.map((attempt) => attempt.errorCode)).toEqual(['transform_failed']);
      } finally {
        await app.close();
        await sink.close();
      }
    }, 120_000);
  });

  it('leaves most worker slots to other deliveries while one rule\'s transforms run to their time limit', async () => {
    const sink = await startWebhookSink();
    const endless = `id: endless\non: [transfer:succeeded]\nwhere: { result.quantity: 1 }\ntransform: "( $loop := function() { $loop() }; $loop() )"\nto:\n  url: ${sink.url}\n`;
    const plain = `id: plain\non: [transfer:succeeded]\nwhere: { result.quantity: 2 }\nto:\n  url: ${sink.url}\n`;
    // 8 slots: the endless rule may hold 2 of them; without that share its 10 renders would take all 8.
    const app = await startTestReceiver({
      ...(await backend.storage()), rules: { transform: { timeoutMs: 2_000 } },
      rulesDir: rulesDirWith({ 'endless.yaml': endless, 'plain.yaml': plain }), delivery: { ...TEST_DELIVERY, maxInFlight: 8 },
    });
    try {
      for (let i = 0; i < 10; i++) expect((await postSigned(app.webhookUrl(), sampleTransferSucceeded({ quantity: 1 }), TEST_SECRET)).status).toBe(200);
      for (let i = 0; i < 4; i++) expect((await postSigned(app.webhookUrl(), sampleTransferSucceeded({ quantity: 2 }), TEST_SECRET)).status).toBe(200);
      await sink.waitFor(4, 20_000);
      const endlessStates = (await app.store.listDeliveries({ ruleId: 'endless' }, { limit: 20 })).items.map((d) => d.state);
      expect(endlessStates).toEqual(endlessStates.map(() => 'pending'));
      const plainDeliveries = await settled(async () => (await app.store.listDeliveries({ ruleId: 'plain' }, { limit: 20 })).items, 4);
      expect(plainDeliveries.map((d) => d.state)).toEqual(['delivered', 'delivered', 'delivered', 'delivered']);
    } finally {
      await app.close();
      await sink.close();
    }
  }, 60_000);

  it('renders once: a retry sends the bytes the first attempt sent, though the transform reads the clock', async () => {
    const sink = await startWebhookSink((index) => (index === 0 ? 503 : 200));
    const rule = `id: clocked\non: [transfer:succeeded]\ntransform: '{ "at": $millis(), "email": result.email }'\nto:\n  url: ${sink.url}\nretry:\n  schedule: [0ms, 300ms]\n`;
    const app = await startTestReceiver({ ...(await backend.storage()), rulesDir: rulesDirWith({ 'clocked.yaml': rule }), delivery: TEST_DELIVERY });
    try {
      const reply = await postSigned(app.webhookUrl(), sampleTransferSucceeded(), TEST_SECRET);
      const [first, second] = await sink.waitFor(2, 10_000);
      expect(second!.rawBody.equals(first!.rawBody)).toBe(true);
      expect(JSON.parse(first!.rawBody.toString())).toEqual({ at: expect.any(Number), email: expect.any(String) });
      const [delivery] = await settled(async () => (await app.store.listDeliveries({ eventId: reply.json.id }, { limit: 10 })).items, 1);
      expect(delivery!.state).toBe('delivered');
    } finally {
      await app.close();
      await sink.close();
    }
  });

  it('moves an ordered key on past a delivery whose transform fails', async () => {
    const sink = await startWebhookSink();
    const rule = `id: ordered\non: [transfer:succeeded]\norder:\n  key: result.checkoutId\ntransform: '{ "n": result.quantity = 1 ? $error("first one refused") : result.quantity }'\nto:\n  url: ${sink.url}\n`;
    const app = await startTestReceiver({ ...(await backend.storage()), rulesDir: rulesDirWith({ 'ordered.yaml': rule }), delivery: TEST_DELIVERY });
    try {
      const first = sampleTransferSucceeded({ quantity: 1 });
      const second = { ...sampleTransferSucceeded({ quantity: 2 }), result: { ...sampleTransferSucceeded({ quantity: 2 }).result, checkoutId: first.result.checkoutId } };
      expect((await postSigned(app.webhookUrl(), first, TEST_SECRET)).status).toBe(200);
      expect((await postSigned(app.webhookUrl(), second, TEST_SECRET)).status).toBe(200);
      const deliveries = await settled(async () => (await app.store.listDeliveries({ ruleId: 'ordered' }, { limit: 10 })).items, 2);
      expect(deliveries.map((d) => ({ state: d.state, orderKey: d.orderKey, deadReason: d.deadReason })).reverse()).toEqual([
        { state: 'dead', orderKey: first.result.checkoutId, deadReason: expect.stringMatching(/^transform failed at position \d+: D3137 first one refused$/) },
        { state: 'delivered', orderKey: first.result.checkoutId, deadReason: null },
      ]);
      expect(sink.received.map((request) => request.rawBody.toString())).toEqual(['{"n":2}']);
    } finally {
      await app.close();
      await sink.close();
    }
  });
});
