import { describe, expect, it } from 'vitest';
import type { NewEvent } from '../../src/store/event-store.js';
import type { AttemptRecord, NewDelivery } from '../../src/store/outbox-store.js';
import type { Store } from '../../src/store/store.js';
import { perTestClock, storeOpener, type StoreFactory } from './contract-helpers.js';

/**
 * The policies written once above the backends (store/deliveries-due.ts, redrive-spacing.ts,
 * attempt-to-record.ts): both backends must apply them alike.
 */
const DEST_A = 'http://127.0.0.1:11';

function event(transferId: string, overrides: Partial<NewEvent> = {}): NewEvent {
  return {
    source: 'checkout', event: 'transfer:succeeded', transferId, checkoutId: null, email: null, walletAddress: null, validation: 'valid',
    receivedAt: Date.now(), headers: { 'x-trace': 'abc', 'content-type': 'application/json' }, body: Buffer.from(`{"event":"transfer:succeeded","result":{"id":"${transferId}"}}`), ...overrides,
  };
}

function forward(ruleId: string, overrides: Partial<NewDelivery> = {}): NewDelivery {
  return { ruleId, ruleSetHash: 'h1', body: null, contentType: 'application/json', ...overrides };
}

function failed(n: number, urlOrigin: string): AttemptRecord {
  return { attempt: n, startedAt: Date.now(), durationMs: 2, urlOrigin, status: 503, errorCode: null, errorMessage: null, responseExcerpt: null, outcome: 'dead' };
}

/** Counts the wake-ups `store` sends while `act` runs. */
async function wakeUpsDuring(store: Store, act: () => Promise<unknown>): Promise<number> {
  let calls = 0;
  const stop = store.onDeliveriesDue(() => {
    calls += 1;
  });
  try {
    await act();
  } finally {
    stop();
  }
  return calls;
}

export function storePolicyContract(factory: StoreFactory): void {
  const clock = perTestClock();
  const open = storeOpener(factory, clock);

  describe('when a commit wakes the delivery loops', () => {
    it('wakes for a new delivery due later as for one due now, never for deliveries stored dead', async () => {
      const store = await open();
      expect(await wakeUpsDuring(store, () => store.saveEvent(event('later', { deliveries: [forward('slow', { delayMs: 60_000 })] })))).toBe(1);
      expect(await wakeUpsDuring(store, () => store.saveEvent(event('now', { deliveries: [forward('fwd')] })))).toBe(1);
      expect(await wakeUpsDuring(store, () => store.saveEvent(event('dead', { deliveries: [forward('gone', { deadReason: 'rule removed' })] })))).toBe(0);
      expect(await wakeUpsDuring(store, () => store.saveEvent(event('mixed', { deliveries: [forward('gone', { deadReason: 'x' }), forward('fwd')] })))).toBe(1);
    });

    it('applies the same rule to replays and edited copies', async () => {
      const store = await open();
      const { id } = await store.saveEvent(event('original'));
      const dead = [forward('gone', { deadReason: 'rule removed' })];
      expect(await wakeUpsDuring(store, () => store.createDeliveries(id, dead, 'replay'))).toBe(0);
      expect(await wakeUpsDuring(store, () => store.createDeliveries(id, [forward('fwd', { delayMs: 5_000 })], 'replay'))).toBe(1);
      expect(await wakeUpsDuring(store, () => store.createDeliveriesForEvents([{ eventId: id, deliveries: dead }], 'replay'))).toBe(0);
      expect(await wakeUpsDuring(store, () => store.createDeliveriesForEvents([{ eventId: id, deliveries: dead }, { eventId: id, deliveries: [forward('fwd')] }], 'replay'))).toBe(1);
      const { receivedAt: _receivedAt, ...copy } = event('original', { body: Buffer.from('{"event":"transfer:succeeded","result":{"id":"original","n":1}}') });
      expect(await wakeUpsDuring(store, () => store.saveEditedCopy({ ...copy, deliveries: dead, editedFrom: id, editedAt: Date.now(), via: 'api' }))).toBe(0);
      expect(await wakeUpsDuring(store, () => store.saveEditedCopy({ ...copy, deliveries: [forward('fwd')], editedFrom: id, editedAt: Date.now(), via: 'api' }))).toBe(1);
    });
  });

  describe('redrive spacing', () => {
    const DEST = 'http://127.0.0.1:9';

    it('spaces redriven dead letters by the gap of the rule before each, skipping rules not opted in', async () => {
      const store = await open();
      await store.openOutage(DEST, clock.now() - 1);
      const ids: number[] = [];
      for (const rule of ['a', 'c', 'skip', 'a']) {
        const { id: eventId } = await store.saveEvent(event(`spaced-${rule}-${Math.random()}`, { receivedAt: clock.now(), deliveries: [forward(rule)] }));
        const [claimed] = (await store.claimDueDeliveries({ limit: 100, leaseMs: 60_000 })).filter((d) => d.eventId === eventId);
        await store.recordAttempt(claimed!.id, claimed!.leaseToken, failed(1, DEST), { state: 'dead', reason: 'retries exhausted', retryable: true });
        ids.push(claimed!.id);
      }
      const closedAt = Date.now();
      clock.set(closedAt);
      const closed = await store.closeOutage(DEST, new Map([['a', 100], ['c', 1_000]]));
      expect(closed!.redriven).toEqual([ids[0], ids[1], ids[3]]);
      const dueAt = async (id: number): Promise<number | undefined> => (await store.getDelivery(id))!.redrives[0]?.dueAt;
      expect([await dueAt(ids[0]!), await dueAt(ids[1]!), await dueAt(ids[3]!)]).toEqual([closedAt, closedAt + 100, closedAt + 1_100]);
      expect((await store.getDelivery(ids[2]!))!.state).toBe('dead');
    });
  });

  describe('what an attempt leaves on its delivery', () => {
    it('keeps the last error, the dead reason and, for retryable deaths, the destination a redrive looks for', async () => {
      const store = await open();
      await store.saveEvent(event('attempted', { deliveries: [forward('a'), forward('b')] }));
      clock.set(Date.now() + 1);
      const [first, second] = (await store.claimDueDeliveries({ limit: 10, leaseMs: 60_000 })).sort((x, y) => x.id - y.id);
      const refused = { ...failed(1, DEST_A), status: null, errorCode: 'ECONNREFUSED', errorMessage: 'connect refused' };
      await store.recordAttempt(first!.id, first!.leaseToken, refused, { state: 'dead', reason: 'retries exhausted', retryable: true });
      await store.recordAttempt(second!.id, second!.leaseToken, { ...failed(1, DEST_A), status: 404 }, { state: 'dead', reason: 'permanent: 404', retryable: false });
      expect(await store.getDelivery(first!.id)).toMatchObject({ state: 'dead', attempts: 1, lastStatus: null, lastError: 'ECONNREFUSED: connect refused', deadReason: 'retries exhausted' });
      expect(await store.getDelivery(second!.id)).toMatchObject({ state: 'dead', attempts: 1, lastStatus: 404, lastError: null, deadReason: 'permanent: 404' });
      // Only the retryable death is a redrive's candidate.
      await store.openOutage(DEST_A, 0);
      expect((await store.closeOutage(DEST_A, new Map([['a', 0], ['b', 0]])))!.redriven).toEqual([first!.id]);
    });
  });

  describe('received headers without the body', () => {
    it('reads an event\'s stored headers alone, and null for an event not stored', async () => {
      const store = await open();
      const { id } = await store.saveEvent(event('headers'));
      expect(await store.getEventHeaders(id)).toEqual({ 'x-trace': 'abc', 'content-type': 'application/json' });
      expect(await store.getEventHeaders(id + 1_000)).toBeNull();
    });
  });
}
