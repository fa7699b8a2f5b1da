import { pino } from 'pino';
import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCircuitBreaker } from '../../../src/delivery/circuit-breaker.js';
import { createDestinationLimiter } from '../../../src/delivery/destination-limiter.js';
import { DeliveryLoop } from '../../../src/delivery/delivery-loop.js';
import { HookrelayError } from '../../../src/errors.js';
import { loadRuleSet } from '../../../src/rules/loader.js';
import type { RuleSet } from '../../../src/rules/types.js';
import { PostgresStore } from '../../../src/store/postgres/postgres-store.js';
import { SqliteStore } from '../../../src/store/sqlite/sqlite-store.js';
import type { Store } from '../../../src/store/store.js';
import { createTestDatabase, describeWithPostgres, TEST_POOL, type TestDatabase } from '../../helpers/postgres.js';
import { eventually, rulesDirWith } from '../../helpers/rules.js';
import { makeTempDir, removeTempDirs } from '../../helpers/temp-dir.js';
import { startWebhookSink } from '../../helpers/webhook-sink.js';

afterAll(() => removeTempDirs());

/** As in production: a row left leased by mistake would wait this long, far past the test's deadline. */
const LEASE_MS = 10 * 60_000;

async function rulesFor(url: string, extra = ''): Promise<RuleSet> {
  const loaded = await loadRuleSet(rulesDirWith({ 'sink.yaml': `id: sink\non: [transfer:succeeded]\nto:\n  url: ${url}\n${extra}` }), {});
  if (!loaded.ok) throw new Error(JSON.stringify(loaded.errors));
  return loaded.ruleSet;
}

async function fillOutbox(store: Store, hash: string, deliveries: number): Promise<void> {
  for (let start = 0; start < deliveries; start += 100) {
    await Promise.all(Array.from({ length: Math.min(100, deliveries - start) }, (_, i) => {
      const transferId = `tr-${start + i}`;
      return store.saveEvent({
        source: 'checkout', event: 'transfer:succeeded', transferId, checkoutId: null, email: null, walletAddress: null, validation: 'valid',
        receivedAt: Date.now(), headers: {}, body: Buffer.from(JSON.stringify({ event: 'transfer:succeeded', result: { id: transferId } })),
        deliveries: [{ ruleId: 'sink', ruleSetHash: hash, body: null, contentType: 'application/json' }],
      });
    }));
  }
}

/**
 * The store as a loaded machine makes it: now and then a call that gives a row back or records an attempt
 * fails (PostgreSQL: no pooled connection within `connectTimeoutMs`), the next one works again.
 */
function sometimesFailing(store: Store): Store {
  let calls = 0;
  const failEvery5th = (): void => {
    calls += 1;
    if (calls % 5 === 0) throw new HookrelayError('store_unavailable', 'The event store cannot be reached right now.');
  };
  return Object.assign(Object.create(store) as Store, {
    releaseDelivery: async (...args: Parameters<Store['releaseDelivery']>) => {
      failEvery5th();
      return store.releaseDelivery(...args);
    },
    recordAttempt: async (...args: Parameters<Store['recordAttempt']>) => {
      failEvery5th();
      return store.recordAttempt(...args);
    },
  });
}

/**
 * Many slots and a small destination limit: most claimed rows are given back as busy, and every such call
 * or record that fails must be made again, not leave its row leased (unsent, attempts 0) until the lease ends.
 */
async function drainsEveryRow(store: Store, deliveries: number, slots: number): Promise<void> {
  const sink = await startWebhookSink(() => 200);
  const rules = await rulesFor(sink.url);
  await fillOutbox(store, rules.hash, deliveries);
  const worker = new DeliveryLoop({
    store: sometimesFailing(store), rules: () => rules, dispatcher: new Agent(), limiter: createDestinationLimiter(), breaker: createCircuitBreaker(),
    logger: pino({ level: 'silent' }), defaultConcurrency: 8, maxInFlight: slots, batchSize: 32, leaseMs: LEASE_MS, pollIntervalMs: 20,
  });
  try {
    worker.start();
    const stats = await eventually(async () => {
      const s = await store.outboxStats();
      return s.pending === 0 ? s : null;
    }, 60_000, 'every delivery sent and recorded');
    expect(stats.dead).toBe(0);
    expect(new Set(sink.received.map((r) => r.headers['x-hookrelay-delivery'])).size).toBe(deliveries);
  } finally {
    await worker.stop(1_000);
    await sink.close();
  }
}

describe('draining an outbox while some store calls fail (SQLite)', () => {
  it('sends and records every row; none is left leased', async () => {
    const store = new SqliteStore({ dataDir: makeTempDir(), durability: 'normal' });
    try {
      await drainsEveryRow(store, 1_000, 64);
    } finally {
      await store.close();
    }
  }, 90_000);
});

describeWithPostgres('draining an outbox while some store calls fail (PostgreSQL)', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(() => database.drop());

  it('sends and records every row; none is left leased', async () => {
    // Connecting is slow on a loaded machine; the failures this test is about are injected above.
    const store = await PostgresStore.open({ ...TEST_POOL, url: await database.freshSchemaUrl(), connectTimeoutMs: 30_000 });
    try {
      // Fewer rows and slots: every give-back is a commit of its own, slow on a loaded machine.
      await drainsEveryRow(store, 200, 16);
    } finally {
      await store.close();
    }
  }, 90_000);
});

describe('a backlog waiting for a rate-limited destination (SQLite)', () => {
  it('gives each waiting row back once, for its turn, not every few hundred milliseconds', async () => {
    const store = new SqliteStore({ dataDir: makeTempDir(), durability: 'normal' });
    const sink = await startWebhookSink(() => 200);
    const rules = await rulesFor(sink.url, 'rateLimit:\n  perSecond: 10\n');
    const rows = 30;
    await fillOutbox(store, rules.hash, rows);
    let givenBack = 0;
    const counting = Object.assign(Object.create(store) as Store, {
      releaseDelivery: async (...args: Parameters<Store['releaseDelivery']>) => {
        givenBack += 1;
        return store.releaseDelivery(...args);
      },
    });
    const worker = new DeliveryLoop({
      store: counting, rules: () => rules, dispatcher: new Agent(), limiter: createDestinationLimiter(), breaker: createCircuitBreaker(),
      logger: pino({ level: 'silent' }), defaultConcurrency: 256, maxInFlight: 64, batchSize: 64, leaseMs: LEASE_MS, pollIntervalMs: 20,
    });
    try {
      worker.start();
      // One second's worth goes at once; the other 20 rows take about two more seconds at 10 per second.
      await sink.waitFor(rows, 20_000);
      // Each of those 20 was given back once, to the time of its token (a few twice, if a turn came early);
      // given back every 200-400 ms instead, they would be given back about 7 times each.
      expect(givenBack).toBeGreaterThanOrEqual(rows - 10);
      expect(givenBack).toBeLessThan(2 * (rows - 10));
      const arrivals = sink.received.map((r) => r.receivedAt).sort((a, b) => a - b);
      expect(arrivals.at(-1)! - arrivals[0]!).toBeGreaterThan(1_500);
    } finally {
      await worker.stop(1_000);
      await sink.close();
      await store.close();
    }
  }, 60_000);
});
