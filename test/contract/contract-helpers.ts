import { afterEach, beforeEach } from 'vitest';
import type { Clock } from '../../src/store/clock.js';
import type { NewNode } from '../../src/store/cluster-store.js';
import type { NewEvent } from '../../src/store/event-store.js';
import type { NewEventRead, NewEvents, StreamPosition } from '../../src/store/new-event-store.js';
import type { AttemptRecord, NewDelivery } from '../../src/store/outbox-store.js';
import type { Store } from '../../src/store/store.js';

/**
 * What every store promises, role by role (a file per role, listed in role-contracts.ts), checked through the
 * roles alone: no test reaches into a backend's connection or files. Each backend runs every role's contract
 * with a factory that opens a fresh, empty store per test (test/contract/sqlite.test.ts, postgres.test.ts).
 */
export interface StoreFactory {
  /** A new store on fresh, empty storage, reading now from `clock` (default: the system clock); the suite closes it. */
  open(clock?: Clock): Promise<Store>;
  /** Leases and heartbeats keep the database's clock (PostgreSQL): for them, time passes only by waiting. */
  databaseClock: boolean;
}

/** A clock a test moves instead of waiting: it starts at the system clock's now and stands still until advanced. */
export class TestClock implements Clock {
  private time = Date.now();

  now(): number {
    return this.time;
  }

  advance(ms: number): void {
    this.time += ms;
  }

  /** Moves to `ms` (unix ms), forwards or back: what a test passed as `now` before the store read its clock. */
  set(ms: number): void {
    this.time = ms;
  }
}

/** Lets `ms` pass for a store on `clock`: on the test clock, and where leases and heartbeats keep the database's clock, in real time too. */
export async function letPass(factory: StoreFactory, clock: TestClock, ms: number): Promise<void> {
  clock.advance(ms);
  if (factory.databaseClock) await new Promise((resolve) => setTimeout(resolve, ms));
}

/** One TestClock for the stores of the calling suite, back at the system clock's now before each test. */
export function perTestClock(): TestClock {
  const clock = new TestClock();
  beforeEach(() => clock.set(Date.now()));
  return clock;
}

/** Opens stores from `factory` (on `defaultClock` unless given one) for the tests of the calling suite; each is closed after its test. */
export function storeOpener(factory: StoreFactory, defaultClock?: Clock): (clock?: Clock) => Promise<Store> {
  const opened: Store[] = [];
  afterEach(async () => {
    for (const store of opened.splice(0)) await store.close();
  });
  return async (clock = defaultClock) => {
    const store = await factory.open(clock);
    opened.push(store);
    return store;
  };
}

export const RAW = Buffer.from('{"event":"transfer:succeeded","result":{"id":"t-1"}}  ');

export function event(transferId: string, overrides: Partial<NewEvent> = {}): NewEvent {
  return {
    source: 'checkout', event: 'transfer:succeeded', transferId, checkoutId: null, email: null, walletAddress: null, validation: 'valid',
    receivedAt: Date.now(), headers: {}, body: Buffer.from(`{"event":"transfer:succeeded","result":{"id":"${transferId}"}}`), ...overrides,
  };
}

export function forward(ruleId: string, overrides: Partial<NewDelivery> = {}): NewDelivery {
  return { ruleId, ruleSetHash: 'h1', body: null, contentType: 'application/json', ...overrides };
}

export function attempt(n: number, outcome: AttemptRecord['outcome'], status: number | null = 200): AttemptRecord {
  return { attempt: n, startedAt: Date.now(), durationMs: 2, urlOrigin: 'http://127.0.0.1:9', status, errorCode: null, errorMessage: null, responseExcerpt: null, outcome };
}

export function node(id: string, overrides: Partial<NewNode> = {}): NewNode {
  return { id, host: 'host-1', pid: 4242, role: 'all', version: '1.2.3', ruleSetHash: 'hash-1', heartbeatMs: 60_000, startedAt: 1_000, ...overrides };
}

/** Lets time pass until the node is no longer listed as live (its heartbeat aged past three of its intervals). */
export async function waitUntilNotLive(factory: StoreFactory, clock: TestClock, store: Store, id: string): Promise<void> {
  const deadline = Date.now() + 5_000;
  while ((await store.listLiveNodes()).some((n) => n.id === id)) {
    if (Date.now() > deadline) throw new Error(`node ${id} still live after 5 s`);
    await letPass(factory, clock, 10);
  }
}

/**
 * One read of new events once none is held back: on PostgreSQL a write transaction open anywhere on the
 * server (other databases' too) holds new events back for a moment, so a read can come back short.
 */
export async function readNewSettled<B extends boolean>(store: Store, from: StreamPosition, limit: number, withBodies: B): Promise<NewEvents<NewEventRead<B>>> {
  let read = await store.readNewEvents({}, from, limit, withBodies);
  for (const deadline = Date.now() + 20_000; read.events.length < limit && read.heldBack && Date.now() < deadline; ) {
    await new Promise((resolve) => setTimeout(resolve, 10));
    read = await store.readNewEvents({}, from, limit, withBodies);
  }
  return read;
}
