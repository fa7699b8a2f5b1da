import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { verifyHmacSha256Hex } from '../../../src/signing/hmac-sha256-hex.js';
import { removeTempDirs } from '../../helpers/temp-dir.js';
import {
  allSettledOrThrow,
  RULE_SECRET,
  RULE_SIGNATURE_HEADER,
  forwardingRule,
  mapLimit,
  readStore,
  sinkRequests,
  startMockCheckout,
  startReceiver,
  startSink,
  stopAllProcesses,
  type MockDelivery,
} from './support/stack.js';

const PURCHASES = 200;
const CONCURRENCY = 10;

afterEach(stopAllProcesses);
afterAll(() => removeTempDirs());

function transferIdOf(body: Buffer | string): string {
  return JSON.parse(body.toString()).result.id as string;
}

describe('200 purchases across 3 checkouts through the automation hook', () => {
  it('stores every purchase once and forwards it once per matching rule, byte-exact and signed', { timeout: 60_000 }, async () => {
    const sink = await startSink();
    const [receiver, mock] = await allSettledOrThrow([
      startReceiver({
        'all.yaml': forwardingRule('all-purchases', `${sink.url}/all`),
        'crypto.yaml': forwardingRule('crypto-purchases', `${sink.url}/crypto`, 'result.paymentMethod: BUY_WITH_CRYPTO'),
      }),
      startMockCheckout(),
    ]);
    const checkouts: { id: string }[] = [];
    for (const title of ['Genesis Passes', 'Founders Edition', 'Season Tickets']) {
      checkouts.push(await mock.createCheckout(receiver.url, { collectionTitle: title }));
    }

    // Purchase i goes to checkout i % 3; every fourth one is paid with crypto.
    const plan = Array.from({ length: PURCHASES }, (_, i) => ({
      checkoutId: checkouts[i % 3]!.id,
      paymentMethod: i % 4 === 0 ? 'BUY_WITH_CRYPTO' : 'BUY_WITH_CARD',
      email: `buyer-${i}@example.com`,
    }));
    const answers = await mapLimit(plan, CONCURRENCY, async ({ checkoutId, ...input }) => {
      const reply = await mock.call('POST', `/mock/checkout/${checkoutId}/purchase`, input);
      expect(reply.status, JSON.stringify(reply.json)).toBe(200);
      return reply.json as { transfer: { id: string; paymentMethod: string }; deliveries: MockDelivery[] };
    });

    // hookrelay accepted every webhook at the first attempt.
    for (const answer of answers) {
      expect(answer.deliveries).toHaveLength(1);
      expect(answer.deliveries[0]).toMatchObject({ transferId: answer.transfer.id, status: 200, ok: true, attempts: 1 });
    }
    const sentBody = new Map(answers.map((a) => [a.transfer.id, a.deliveries[0]!.body]));
    expect(sentBody.size).toBe(PURCHASES);
    const cryptoIds = new Set(answers.filter((a) => a.transfer.paymentMethod === 'BUY_WITH_CRYPTO').map((a) => a.transfer.id));
    expect(cryptoIds.size).toBe(PURCHASES / 4);

    // The mock recorded the purchases per checkout, and its delivery log agrees with the answers.
    for (const [index, checkout] of checkouts.entries()) {
      const expected = plan.filter((_, i) => i % 3 === index).length;
      expect(await mock.transfers(checkout.id)).toHaveLength(expected);
      const deliveries = await mock.deliveries(checkout.id);
      expect(deliveries).toHaveLength(expected);
      expect(deliveries.every((d) => d.status === 200)).toBe(true);
    }

    // Forwarding: wait for everything, then give the worker time to (wrongly) send more.
    await sink.waitFor(PURCHASES + cryptoIds.size, 30_000);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const toAll = sinkRequests(sink, '/all');
    const toCrypto = sinkRequests(sink, '/crypto');
    expect(toAll).toHaveLength(PURCHASES);
    expect(toCrypto).toHaveLength(cryptoIds.size);
    expect(sink.received).toHaveLength(PURCHASES + cryptoIds.size);
    expect(new Set(toAll.map((r) => transferIdOf(r.rawBody)))).toEqual(new Set(sentBody.keys()));
    expect(new Set(toCrypto.map((r) => transferIdOf(r.rawBody)))).toEqual(cryptoIds);
    for (const request of [...toAll, ...toCrypto]) {
      const original = Buffer.from(sentBody.get(transferIdOf(request.rawBody))!, 'utf8');
      expect(request.rawBody.equals(original)).toBe(true);
      expect(verifyHmacSha256Hex([RULE_SECRET], request.rawBody, String(request.headers[RULE_SIGNATURE_HEADER]))).toBe(true);
    }
    // One delivery id per (event, rule).
    expect(new Set(sink.received.map((r) => r.headers['webhook-id'])).size).toBe(PURCHASES + cryptoIds.size);

    // The store: one event per purchase, each received once; one delivered outbox row per matching rule.
    expect(await receiver.stop()).toBe(0);
    const store = await readStore(receiver.dataDir);
    expect(store.events).toHaveLength(PURCHASES);
    expect(new Set(store.events.map((e) => e.transferId))).toEqual(new Set(sentBody.keys()));
    expect(store.events.every((e) => e.receivedCount === 1 && e.validation === 'valid')).toBe(true);
    for (const [index, checkout] of checkouts.entries()) {
      expect(store.events.filter((e) => e.checkoutId === checkout.id)).toHaveLength(plan.filter((_, i) => i % 3 === index).length);
    }
    for (const summary of store.events) {
      expect(store.getEvent(summary.id).body.equals(Buffer.from(sentBody.get(summary.transferId)!, 'utf8'))).toBe(true);
    }
    const byRule = (ruleId: string) => store.deliveries.filter((d) => d.ruleId === ruleId);
    expect(byRule('all-purchases')).toHaveLength(PURCHASES);
    expect(byRule('crypto-purchases')).toHaveLength(cryptoIds.size);
    expect(store.deliveries).toHaveLength(PURCHASES + cryptoIds.size);
    expect(store.deliveries.every((d) => d.state === 'delivered' && d.attempts === 1)).toBe(true);
    const transferIdByEvent = new Map(store.events.map((e) => [e.id, e.transferId]));
    expect(new Set(byRule('crypto-purchases').map((d) => transferIdByEvent.get(d.eventId)))).toEqual(cryptoIds);
  });
});
