import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { removeTempDirs } from '../../helpers/temp-dir.js';
import {
  allSettledOrThrow,
  forwardingRule,
  readStore,
  sinkRequests,
  startMockCheckout,
  startReceiver,
  startSink,
  stopAllProcesses,
  type MockDelivery,
} from './support/stack.js';

afterEach(stopAllProcesses);
afterAll(() => removeTempDirs());

describe('bad signatures and duplicate deliveries from the mock', () => {
  it('refuses invalid and empty signatures with 401, accepts a duplicate twice but stores and forwards it once', async () => {
    const sink = await startSink();
    const [receiver, mock] = await allSettledOrThrow([startReceiver({ 'all.yaml': forwardingRule('all-purchases', `${sink.url}/all`) }), startMockCheckout()]);
    const checkout = await mock.createCheckout(receiver.url);

    async function purchase(options: Record<string, unknown>) {
      const reply = await mock.call('POST', `/mock/checkout/${checkout.id}/purchase`, options);
      expect(reply.status, JSON.stringify(reply.json)).toBe(200);
      return reply.json as { transfer: { id: string }; deliveries: MockDelivery[] };
    }

    const invalid = await purchase({ email: 'invalid@example.com', signature: 'invalid' });
    const empty = await purchase({ email: 'empty@example.com', signature: 'empty' });
    const good = await purchase({ email: 'good@example.com' });
    const duplicated = await purchase({ email: 'dup@example.com', duplicate: true });

    // What the mock saw: hookrelay answered 401 to both bad signatures (not retried), 200 to the rest.
    expect(invalid.deliveries).toHaveLength(1);
    expect(invalid.deliveries[0]).toMatchObject({ signature: 'invalid', status: 401, ok: false, error: 'HTTP 401', attempts: 1 });
    expect(empty.deliveries).toHaveLength(1);
    expect(empty.deliveries[0]).toMatchObject({ signature: 'empty', status: 401, ok: false, error: 'HTTP 401', attempts: 1 });
    expect(good.deliveries).toHaveLength(1);
    expect(good.deliveries[0]).toMatchObject({ signature: 'valid', status: 200, ok: true, attempts: 1 });
    expect(duplicated.deliveries).toHaveLength(2);
    for (const copy of duplicated.deliveries) expect(copy).toMatchObject({ transferId: duplicated.transfer.id, status: 200, ok: true, attempts: 1 });
    expect(duplicated.deliveries[0]!.body).toBe(duplicated.deliveries[1]!.body);

    // The mock's delivery log holds the same, oldest first.
    const log = await mock.deliveries(checkout.id);
    expect(log.map((d) => [d.transferId, d.status])).toEqual([
      [invalid.transfer.id, 401],
      [empty.transfer.id, 401],
      [good.transfer.id, 200],
      [duplicated.transfer.id, 200],
      [duplicated.transfer.id, 200],
    ]);
    // The mock itself recorded all four purchases; only the receiver refused two.
    expect(await mock.transfers(checkout.id)).toHaveLength(4);

    // Forwarded: the good one and the duplicate, once each.
    await sink.waitFor(2, 10_000);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const forwarded = sinkRequests(sink, '/all').map((r) => JSON.parse(r.rawBody.toString()).result.id);
    expect(forwarded.sort()).toEqual([good.transfer.id, duplicated.transfer.id].sort());
    expect(sink.received).toHaveLength(2);

    expect(await receiver.stop()).toBe(0);
    const store = await readStore(receiver.dataDir);
    expect(store.events.map((e) => [e.transferId, e.receivedCount]).sort()).toEqual(
      [
        [good.transfer.id, 1],
        [duplicated.transfer.id, 2],
      ].sort(),
    );
    const dup = store.events.find((e) => e.transferId === duplicated.transfer.id)!;
    expect(store.getEvent(dup.id).body.toString('utf8')).toBe(duplicated.deliveries[0]!.body);
    expect(store.deliveries).toHaveLength(2);
    expect(store.deliveries.every((d) => d.state === 'delivered')).toBe(true);
  });
});
