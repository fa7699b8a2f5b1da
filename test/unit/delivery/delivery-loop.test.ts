import { pino } from 'pino';
import { Agent } from 'undici';
import { afterAll, describe, expect, it } from 'vitest';
import { createCircuitBreaker } from '../../../src/delivery/circuit-breaker.js';
import { createDestinationLimiter } from '../../../src/delivery/destination-limiter.js';
import { DeliveryLoop, type DeliveryLoopStore } from '../../../src/delivery/delivery-loop.js';
import type { RuleSet } from '../../../src/rules/types.js';
import { loadRuleSet } from '../../../src/rules/loader.js';
import type { ClaimedDelivery } from '../../../src/store/delivery-queue.js';
import { fakeRole } from '../../helpers/role-fake.js';
import { eventually, rulesDirWith } from '../../helpers/rules.js';
import { removeTempDirs } from '../../helpers/temp-dir.js';
import { startWebhookSink } from '../../helpers/webhook-sink.js';

afterAll(() => removeTempDirs());

const emptyRules = { rules: [], hash: 'empty', loadedAt: new Date(), files: [] } as unknown as RuleSet;

function claimed(id: number): ClaimedDelivery {
  return { id, eventId: id, ruleId: 'gone', ruleSetHash: 'empty', contentType: 'application/json', attempts: 0, passOffset: 0, leaseToken: 't', orderKey: null, blockedSince: null, lastError: null, payload: Buffer.from('{}'), hasBody: false };
}

function worker(store: Partial<DeliveryLoopStore>, options: { maxInFlight?: number; batchSize?: number; rules?: RuleSet; pollIntervalMs?: number; claimDelayMs?: number; adaptive?: boolean } = {}): DeliveryLoop {
  return new DeliveryLoop({
    store: fakeRole<DeliveryLoopStore>({ onDeliveriesDue: () => () => {}, ...store }),
    rules: () => options.rules ?? emptyRules,
    dispatcher: new Agent(),
    limiter: createDestinationLimiter({ adaptive: options.adaptive }),
    breaker: createCircuitBreaker(),
    logger: pino({ level: 'silent' }),
    defaultConcurrency: 10,
    maxInFlight: options.maxInFlight ?? 8,
    batchSize: options.batchSize ?? 8,
    leaseMs: 60_000,
    pollIntervalMs: options.pollIntervalMs ?? 100,
    claimDelayMs: options.claimDelayMs,
  });
}

/** How late a 20 ms timer fires while the worker runs: large when the event loop is starved. */
async function timerLag(): Promise<number> {
  const started = performance.now();
  await new Promise((resolve) => setTimeout(resolve, 20));
  return performance.now() - started - 20;
}

describe('DeliveryLoop loop', () => {
  it('backs off when claiming fails instead of spinning, and keeps the event loop responsive', async () => {
    let claims = 0;
    const w = worker({
      claimDueDeliveries: async () => {
        claims += 1;
        throw new Error('SQLITE_IOERR');
      },
      nextDueAt: async () => Date.now() - 1000, // rows are due, but cannot be claimed
    });
    w.start();
    const lag = await timerLag();
    await new Promise((resolve) => setTimeout(resolve, 300));
    await w.stop(100);
    expect(lag).toBeLessThan(200);
    expect(claims).toBeGreaterThanOrEqual(2);
    expect(claims).toBeLessThanOrEqual(6); // one per poll interval, not thousands
  });

  it('waits for a free slot instead of spinning while rows are due and few slots are free', async () => {
    let claims = 0;
    const w = worker(
      {
        claimDueDeliveries: async ({ limit }) => {
          claims += 1;
          return claims === 1 ? Array.from({ length: limit - 1 }, (_, i) => claimed(i + 1)) : [];
        },
        nextDueAt: async () => Date.now() - 1000,
        // Recording never finishes: the claimed attempts hold their slots.
        recordAttempt: () => new Promise<boolean>(() => undefined),
      },
      { maxInFlight: 8, batchSize: 8 },
    );
    w.start();
    const lag = await timerLag();
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(lag).toBeLessThan(200);
    expect(w.activeAttempts).toBe(7);
    expect(claims).toBeLessThanOrEqual(3);
  });

  it('wakes when the store says deliveries fell due, long before its next poll, and stops listening when stopped', async () => {
    let dueListener: (() => void) | null = null;
    let announced = false;
    let claims = 0;
    const w = worker(
      {
        onDeliveriesDue: (listener) => {
          dueListener = listener;
          return () => {
            dueListener = null;
          };
        },
        claimDueDeliveries: async () => {
          claims += 1;
          return [];
        },
        nextDueAt: async () => (announced && claims === 0 ? Date.now() - 1 : null),
      },
      { pollIntervalMs: 60_000 },
    );
    w.start();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(claims).toBe(0); // idle: nothing due, next look in a minute
    announced = true;
    dueListener!();
    await eventually(() => claims > 0, 1_000, 'a claim right after the notification');
    await w.stop(10);
    expect(dueListener).toBeNull();
  });

  it('frees a slot when its HTTP exchange ends, not when its outcome is recorded: the next claim may record it', async () => {
    const sink = await startWebhookSink();
    const loaded = await loadRuleSet(rulesDirWith({ 'r.yaml': `id: sink\non: ["*"]\nto:\n  url: ${sink.url}/hook\nconcurrency: 10\n` }), {});
    if (!loaded.ok) throw new Error(JSON.stringify(loaded.errors));
    let nextId = 0;
    const unrecorded: ((kept: boolean) => void)[] = [];
    let recordNow = false;
    const w = worker(
      {
        claimDueDeliveries: async ({ limit }) => Array.from({ length: Math.min(limit, 20 - nextId) }, () => ({ ...claimed(++nextId), ruleId: 'sink', ruleSetHash: loaded.ruleSet.hash })),
        nextDueAt: async () => (nextId < 20 ? Date.now() - 1 : null),
        // Recording waits until the end: were slots held until then, no more than 2 requests would be sent.
        recordAttempt: () => (recordNow ? Promise.resolve(true) : new Promise<boolean>((resolve) => unrecorded.push(resolve))),
      },
      { maxInFlight: 2, batchSize: 2, rules: loaded.ruleSet },
    );
    try {
      w.start();
      await sink.waitFor(20);
      await eventually(() => unrecorded.length === 20, 5_000, 'every answer handed to the store');
      expect(w.activeAttempts).toBe(20); // all still waiting for their records
    } finally {
      recordNow = true;
      unrecorded.forEach((resolve) => resolve(true));
      await w.stop(10);
      await sink.close();
    }
  });

  it('claims the deliveries of the commits that announce them within claimDelayMs together, after that delay', async () => {
    let dueListener: (() => void) | null = null;
    let due = 0;
    const claims: { at: number; rows: number }[] = [];
    const w = worker(
      {
        onDeliveriesDue: (listener) => {
          dueListener = listener;
          return () => undefined;
        },
        claimDueDeliveries: async () => {
          claims.push({ at: performance.now(), rows: due });
          due = 0;
          return [];
        },
        nextDueAt: async () => (due > 0 ? Date.now() - 1 : null),
      },
      { pollIntervalMs: 60_000, claimDelayMs: 40 },
    );
    w.start();
    await new Promise((resolve) => setTimeout(resolve, 20));
    const firstAnnounced = performance.now();
    for (let commit = 0; commit < 5; commit++) {
      due += 1;
      dueListener!();
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    await eventually(() => claims.length > 0, 2_000, 'a claim after the delay');
    await new Promise((resolve) => setTimeout(resolve, 60));
    await w.stop(10);
    expect(claims.map((claim) => claim.rows)).toEqual([5]);
    expect(claims[0]!.at - firstAnnounced).toBeGreaterThanOrEqual(35);
  });

  it('does not read the outbox again each time an attempt ends, unless it waits for a free slot', async () => {
    const sink = await startWebhookSink();
    const loaded = await loadRuleSet(rulesDirWith({ 'r.yaml': `id: sink\non: ["*"]\nto:\n  url: ${sink.url}/hook\nconcurrency: 10\n` }), {});
    if (!loaded.ok) throw new Error(JSON.stringify(loaded.errors));
    let nextId = 0;
    let claims = 0;
    let reads = 0;
    const w = worker(
      {
        claimDueDeliveries: async ({ limit }) => {
          claims += 1;
          return Array.from({ length: Math.min(limit, 40 - nextId) }, () => ({ ...claimed(++nextId), ruleId: 'sink', ruleSetHash: loaded.ruleSet.hash }));
        },
        nextDueAt: async () => {
          reads += 1;
          return nextId < 40 ? Date.now() - 1 : null;
        },
        recordAttempt: async () => true,
      },
      // A fixed limit: no attempt waits for its destination (released rows would need a store that serves them again).
      { maxInFlight: 8, batchSize: 8, rules: loaded.ruleSet, pollIntervalMs: 60_000, adaptive: false },
    );
    try {
      w.start();
      await sink.waitFor(40);
      await eventually(() => w.activeAttempts === 0, 5_000, 'every attempt recorded');
      // A read before the first claim and after the last; a claim after a full batch, or after waiting for
      // slots, needs none.
      expect(claims).toBeGreaterThanOrEqual(5);
      expect(reads).toBeLessThanOrEqual(4);
    } finally {
      await w.stop(10);
      await sink.close();
    }
  });
});
