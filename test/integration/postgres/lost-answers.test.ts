import type pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ClockOffset } from '../../../src/store/postgres/clock-offset.js';
import { openPool } from '../../../src/store/postgres/connection.js';
import { OutboxQueries } from '../../../src/store/postgres/outbox-queries.js';
import { PostgresStore } from '../../../src/store/postgres/postgres-store.js';
import { createTestDatabase, describeWithPostgres, TEST_POOL, type TestDatabase } from '../../helpers/postgres.js';

let database: TestDatabase;

/** A pool whose next answer to the named statement is lost after the statement ran, as when a connection is cut. */
function losingNextAnswer(pool: pg.Pool, statement: string): { pool: pg.Pool; lose(): void } {
  let lose = false;
  const query = (async (config: pg.QueryConfig) => {
    const result = await pool.query(config);
    if (lose && config.name === statement) {
      lose = false;
      throw new Error('Connection terminated unexpectedly');
    }
    return result;
  }) as unknown as pg.Pool['query'];
  return { pool: { query } as pg.Pool, lose: () => (lose = true) };
}

describeWithPostgres('answers lost with their connection (PostgreSQL)', () => {
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(() => database.drop());

  it('gives back at the next claim the rows of a claim that committed but never answered, instead of waiting out the lease', async () => {
    const url = await database.freshSchemaUrl();
    const store = await PostgresStore.open({ url, ...TEST_POOL });
    const pool = openPool({ url, ...TEST_POOL });
    try {
      const now = Date.now();
      await store.saveEvent({
        source: 'checkout', event: 'transfer:succeeded', transferId: 't-1', checkoutId: null, email: null, walletAddress: null, validation: 'valid',
        receivedAt: now, headers: {}, body: Buffer.from('{}'), deliveries: [{ ruleId: 'fwd', ruleSetHash: 'h', body: null, contentType: 'application/json' }],
      });
      const flaky = losingNextAnswer(pool, 'hookrelay_claim');
      const clock = new ClockOffset(async () => Date.now());
      await clock.measure();
      const outbox = new OutboxQueries(flaky.pool, clock);
      // A second later: the row is due whatever the few milliseconds between this clock and the store's.
      const later = now + 1_000;
      flaky.lose();
      await expect(outbox.claim(later, 10, 10 * 60_000)).rejects.toThrow('Connection terminated');
      // The row is leased for ten minutes by a claim nobody holds; the next claim releases and takes it.
      expect(await store.claimDueDeliveries({ limit: 10, leaseMs: 60_000 })).toEqual([]);
      const again = await outbox.claim(later, 10, 60_000);
      expect(again.map((d) => [d.ruleId, d.attempts])).toEqual([['fwd', 0]]);
    } finally {
      await pool.end();
      await store.close();
    }
  });
});
