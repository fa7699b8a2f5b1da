import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import type { Clock } from '../../../src/store/clock.js';
import { PostgresStore } from '../../../src/store/postgres/postgres-store.js';
import { TestClock } from '../../contract/contract-helpers.js';
import { createTestDatabase, describeWithPostgres, TEST_POOL, type TestDatabase } from '../../helpers/postgres.js';

let database: TestDatabase;
const opened: PostgresStore[] = [];
afterEach(async () => {
  for (const store of opened.splice(0)) await store.close();
});

async function node(url: string, clock: Clock): Promise<PostgresStore> {
  const store = await PostgresStore.open({ url, ...TEST_POOL, clock });
  opened.push(store);
  return store;
}

const DEST = 'http://127.0.0.1:9';

describeWithPostgres('redrive with several nodes on one PostgreSQL database', () => {
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(() => database.drop());

  it('one outage however many nodes open it; each dead letter redriven once when they all see the success', async () => {
    const url = await database.freshSchemaUrl();
    const clock = new TestClock();
    const [a, b, c] = [await node(url, clock), await node(url, clock), await node(url, clock)];
    const opens = await Promise.all([a, b, c].map((store) => store.openOutage(DEST, Date.now() - 1)));
    expect(opens.filter((o) => o.opened)).toHaveLength(1);
    expect(new Set(opens.map((o) => o.outage.id)).size).toBe(1);
    const ids: number[] = [];
    for (let i = 0; i < 20; i++) {
      await a.saveEvent({
        source: 'checkout', event: 'transfer:succeeded', transferId: `t-${i}`, checkoutId: null, email: null, walletAddress: null, validation: 'valid',
        receivedAt: Date.now(), headers: {}, body: Buffer.from('{}'), deliveries: [{ ruleId: 'fwd', ruleSetHash: 'h', body: null, contentType: 'application/json' }],
      });
    }
    // A second ahead: each node reads due times through its own estimate of the database clock.
    clock.set(Date.now() + 1_000);
    const due = await b.claimDueDeliveries({ limit: 100, leaseMs: 60_000 });
    expect(due).toHaveLength(20);
    for (const claimed of due) {
      const attempt = { attempt: 1, startedAt: Date.now(), durationMs: 1, urlOrigin: DEST, status: 503, errorCode: null, errorMessage: null, responseExcerpt: null, outcome: 'dead' as const };
      await b.recordAttempt(claimed.id, claimed.leaseToken, attempt, { state: 'dead', reason: 'retries exhausted', retryable: true });
      ids.push(claimed.id);
    }
    clock.advance(1);
    const closedAt = clock.now();
    const closes = await Promise.all([a, b, c].map((store) => store.closeOutage(DEST, new Map([['fwd', 10]]))));
    const winners = closes.filter((x) => x !== null);
    expect(winners).toHaveLength(1);
    expect(winners[0]!.redriven).toEqual(ids.sort((x, y) => x - y));
    for (const id of ids) expect((await c.getDelivery(id))!.redrives).toHaveLength(1);
    clock.set(closedAt + 1_000);
    const claimedOnce = await c.claimDueDeliveries({ limit: 100, leaseMs: 60_000 });
    expect(claimedOnce.map((d) => d.id).sort((x, y) => x - y)).toEqual(ids);
  });
});
