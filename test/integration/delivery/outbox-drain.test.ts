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
import { startWebhookSink, type ReceivedWebhook, type SinkReply } from '../../helpers/webhook-sink.js';

afterAll(() => removeTempDirs());

/** As in production: a row left leased by mistake would wait this long, far past the test's deadline. */
const LEASE_MS = 10 * 60_000;

async function rulesFor(url: string, extra = ''): Promise<RuleSet> {
  const loaded = await loadRuleSet(rulesDirWith({ 'sink.yaml': `id: sink\non: [transfer:succeeded]\nto:\n  url: ${url}\n${extra}` }), {});
  if (!loaded.ok) throw new Error(JSON.stringify(loaded.errors));
  return loaded.ruleSet;
}

async function fillOutbox(store: Store, hash: string, deliveries: number, firstId = 0): Promise<void> {
  for (let start = 0; start < deliveries; start += 100) {
    await Promise.all(Array.from({ length: Math.min(100, deliveries - start) }, (_, i) => {
      const transferId = `tr-${firstId + start + i}`;
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

/** Drains `rows` to a sink answering with `reply`, and counts how often the worker gave a row back to the outbox. */
async function drainCountingGiveBacks(rule: string, reply: SinkReply, rows: number, warmUp = 0): Promise<{ givenBack: number; received: ReceivedWebhook[] }> {
  const store = new SqliteStore({ dataDir: makeTempDir(), durability: 'normal' });
  const sink = await startWebhookSink(() => reply);
  const rules = await rulesFor(sink.url, rule);
  await fillOutbox(store, rules.hash, warmUp > 0 ? warmUp : rows);
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
    if (warmUp > 0) {
      // The worker learns the destination's pace, then the backlog arrives.
      await sink.waitFor(warmUp, 10_000);
      givenBack = 0;
      await fillOutbox(store, rules.hash, rows, warmUp);
    }
    const received = (await sink.waitFor(warmUp + rows, 30_000)).slice(warmUp);
    await eventually(async () => (await store.outboxStats()).pending === 0, 10_000, 'every attempt recorded');
    return { givenBack, received };
  } finally {
    await worker.stop(1_000);
    await sink.close();
    await store.close();
  }
}

/** The most requests the sink had open at once. */
function mostAtOnce(received: ReceivedWebhook[]): number {
  const edges = received.flatMap((r) => [[r.receivedAt, 1], [r.closedAt ?? r.receivedAt, -1]]).sort((a, b) => a[0]! - b[0]! || a[1]! - b[1]!);
  let open = 0;
  let most = 0;
  for (const [, step] of edges) most = Math.max(most, (open += step!));
  return most;
}

describe('a backlog waiting for a busy destination (SQLite)', () => {
  it('under a rate limit: each waiting row is given back once, for its turn, not every few hundred milliseconds', async () => {
    const rows = 30;
    const { givenBack, received } = await drainCountingGiveBacks('rateLimit:\n  perSecond: 10\n', 200, rows);
    // One second's worth goes at once; the other 20 rows take about two more seconds at 10 per second. Each
    // is given back once, to the time of its token (a few twice, if a turn came early); given back every
    // 200-400 ms instead, they would be given back about 7 times each.
    expect(givenBack).toBeGreaterThanOrEqual(rows - 10);
    expect(givenBack).toBeLessThan(2 * (rows - 10));
    const arrivals = received.map((r) => r.receivedAt).sort((a, b) => a - b);
    expect(arrivals.at(-1)! - arrivals[0]!).toBeGreaterThan(1_500);
  }, 60_000);

  it('at its concurrency limit: rows wait for the next free slot, or are given back for a turn, within the limit', async () => {
    const rows = 60;
    // Two at a time, 50 ms each: about 1.5 s for the backlog, once the worker knows the destination's pace.
    const { givenBack, received } = await drainCountingGiveBacks('concurrency: 2\n', { status: 200, delayMs: 50 }, rows, 4);
    expect(mostAtOnce(received)).toBeLessThanOrEqual(2);
    // Turns bring rows back twice as fast as the destination takes them: about 1.5 give-backs per row. Given
    // back every 200-400 ms instead, a row is given back about 3.5 times (216 times for these 60).
    expect(givenBack).toBeLessThan(2.5 * rows);
  }, 60_000);
});

describe('rows waiting for a slot when the worker stops (SQLite)', () => {
  it('are given back, due again within a second, not left leased', async () => {
    const store = new SqliteStore({ dataDir: makeTempDir(), durability: 'normal' });
    const sink = await startWebhookSink(() => ({ status: 200, delayMs: 5_000 }));
    const rules = await rulesFor(sink.url, 'concurrency: 1\n');
    await fillOutbox(store, rules.hash, 5);
    const worker = new DeliveryLoop({
      store, rules: () => rules, dispatcher: new Agent(), limiter: createDestinationLimiter(), breaker: createCircuitBreaker(),
      logger: pino({ level: 'silent' }), defaultConcurrency: 256, maxInFlight: 64, batchSize: 64, leaseMs: LEASE_MS, pollIntervalMs: 20,
    });
    try {
      worker.start();
      await sink.waitFor(1, 10_000);
      await worker.stop(100);
      const claimed = new Set<number>();
      await eventually(async () => {
        for (const d of await store.claimDueDeliveries({ limit: 10, leaseMs: LEASE_MS })) claimed.add(d.id);
        return claimed.size === 5;
      }, 2_000, 'every row due again');
      expect((await store.outboxStats()).pending).toBe(5);
    } finally {
      await sink.close();
      await store.close();
    }
  }, 30_000);
});

describe('a destination whose circuit opened (SQLite)', () => {
  it('meets one probe when each pause ends, not its backlog; the held rows spend no attempt, and go once a probe succeeds', async () => {
    const store = new SqliteStore({ dataDir: makeTempDir(), durability: 'normal' });
    let up = false;
    const sink = await startWebhookSink(() => (up ? 200 : 503));
    const rules = await rulesFor(sink.url, 'retry:\n  schedule: [0s, 10ms, 10ms, 10ms, 10ms, 10ms]\n');
    const rows = 5;
    await fillOutbox(store, rules.hash, rows);
    const worker = new DeliveryLoop({
      store, rules: () => rules, dispatcher: new Agent(), limiter: createDestinationLimiter(),
      breaker: createCircuitBreaker({ failureThreshold: 1, coolDownMs: 300 }),
      logger: pino({ level: 'silent' }), defaultConcurrency: 256, maxInFlight: 64, batchSize: 64, leaseMs: LEASE_MS, pollIntervalMs: 20,
    });
    try {
      worker.start();
      // All five fail at once and open the circuit; pauses of 300, 600, 1,200 ms follow, each ended by one probe.
      await sink.waitFor(rows + 2, 10_000);
      await new Promise((resolve) => setTimeout(resolve, 300));
      // Every pause let all five through instead, there would be 15 requests by now.
      expect(sink.received.length).toBeLessThanOrEqual(rows + 2);
      const { items } = await store.listDeliveries({}, { limit: 10 });
      expect(items.map((d) => d.attempts).reduce((a, b) => a + b, 0)).toBe(sink.received.length);
      up = true;
      // The next probe succeeds and closes the circuit: the rest go at once, each with one more attempt.
      await eventually(async () => (await store.outboxStats()).pending === 0, 10_000, 'every row delivered');
      const delivered = (await store.listDeliveries({}, { limit: 10 })).items;
      expect(delivered.every((d) => d.state === 'delivered')).toBe(true);
      expect(sink.received.length).toBe(delivered.reduce((a, d) => a + d.attempts, 0));
    } finally {
      await worker.stop(1_000);
      await sink.close();
      await store.close();
    }
  }, 30_000);
});
