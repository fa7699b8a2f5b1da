import { describe, expect, it } from 'vitest';
import { deliveryWaits, type WaitSources } from '../../../src/operations/delivery-wait.js';
import { fakeRole } from '../../helpers/role-fake.js';
import type { Outage } from '../../../src/store/outage-store.js';
import type { BlockedKey, Delivery } from '../../../src/store/outbox-store.js';

const NOW = Date.parse('2026-05-01T12:00:00Z');
const rule = (id: string, extra: Record<string, unknown> = {}) => ({ id, enabled: true, destination: { url: 'https://hooks.example.com/in' }, retryScheduleMs: [0, 5_000, 30_000, 120_000], ...extra });

function delivery(overrides: Partial<Delivery> = {}): Delivery {
  return {
    id: 7, eventId: 3, ruleId: 'sink', ruleSetHash: 'h', origin: 'ingest', state: 'pending', contentType: 'application/json', attempts: 2,
    nextAttemptAt: NOW + 30_000, lastStatus: 503, lastError: null, deadReason: null, orderKey: null, passOffset: 0, createdAt: NOW - 60_000, updatedAt: NOW, ...overrides,
  };
}

function sources(overrides: Partial<WaitSources> & { outages?: Outage[]; blocked?: BlockedKey[] } = {}): WaitSources {
  const { outages = [], blocked = [], ...rest } = overrides;
  return {
    store: fakeRole<WaitSources['store']>({ listOutages: async () => outages, listBlockedKeys: async () => blocked }),
    rules: { hash: 'h', rules: [rule('sink')], loadedAt: new Date(NOW), files: [] } as never,
    destinations: null,
    nodeId: null,
    now: NOW,
    ...rest,
  };
}

const waitOf = async (d: Delivery, s: WaitSources) => (await deliveryWaits(s, [d]))(d);

describe('deliveryWaits', () => {
  it('says nothing for a delivered or dead delivery', async () => {
    expect(await waitOf(delivery({ state: 'delivered' }), sources())).toBeNull();
    expect(await waitOf(delivery({ state: 'dead' }), sources())).toBeNull();
  });

  it('names the schedule step, and says the time may be a pause end when the destination has an open outage and this process has no circuit', async () => {
    expect(await waitOf(delivery(), sources())).toMatchObject({ reason: 'retry_schedule', message: 'attempt 3 of 4 on the retry schedule (0s, 5s, 30s, 2m)', until: new Date(NOW + 30_000).toISOString() });
    const outage = { id: 1, destination: 'https://hooks.example.com', openedAt: NOW - 200_000, closedAt: null, lastProbeAt: null, redriven: 0 };
    expect(await waitOf(delivery(), sources({ outages: [outage] }))).toMatchObject({
      reason: 'destination_failing', since: new Date(NOW - 200_000).toISOString(), message: expect.stringContaining('has been failing since the outage opened'),
    });
  });

  it('counts the schedule after the attempts outside it (a redrive, a lost connection tried again at once)', async () => {
    expect(await waitOf(delivery({ attempts: 4, passOffset: 3 }), sources())).toMatchObject({ attempt: { next: 5, of: 7 }, message: 'attempt 5 of 7 on the retry schedule (0s, 5s, 30s, 2m)' });
    expect(await waitOf(delivery({ attempts: 3, passOffset: 1 }), sources())).toMatchObject({ attempt: { next: 4, of: 5 } });
  });

  it('a delivery past its schedule (a key kept blocked) has no budget to count against', async () => {
    expect(await waitOf(delivery({ attempts: 4 }), sources())).toMatchObject({ attempt: { next: 5, of: null }, message: expect.stringContaining('repeats its last step') });
    expect(await waitOf(delivery({ attempts: 6, passOffset: 2 }), sources())).toMatchObject({ attempt: { next: 7, of: null } });
  });

  it('a due delivery: rate limited, at the concurrency limit of this node, or simply due', async () => {
    const due = delivery({ nextAttemptAt: NOW - 1 });
    expect(await waitOf(due, sources())).toMatchObject({ reason: 'due' });
    const limited = sources({ rules: { hash: 'h', rules: [rule('sink', { rateLimitPerSecond: 2 })], loadedAt: new Date(NOW), files: [] } as never });
    expect(await waitOf(due, limited)).toMatchObject({ reason: 'rate_limit', message: expect.stringContaining('at most 2 per second') });
    const full = sources({ nodeId: 'n1', destinations: { adaptive: true, destinations: [{ destination: 'https://hooks.example.com', limit: 4, ceiling: 256, inFlight: 4, pausedUntil: null }] } });
    expect(await waitOf(due, full)).toMatchObject({ reason: 'concurrency', node: 'n1' });
  });

  it('a row that has not failed, given a later time by a busy destination (waiting for a slot, or its turn), waits for that destination, not a schedule step', async () => {
    const fresh = delivery({ attempts: 0, lastStatus: null, nextAttemptAt: NOW + 600_000 });
    const full = sources({ nodeId: 'n1', destinations: { adaptive: true, destinations: [{ destination: 'https://hooks.example.com', limit: 2, ceiling: 2, inFlight: 2, pausedUntil: null }] } });
    expect(await waitOf(fresh, full)).toMatchObject({ reason: 'concurrency', node: 'n1' });
    const limited = sources({ rules: { hash: 'h', rules: [rule('sink', { rateLimitPerSecond: 2 })], loadedAt: new Date(NOW), files: [] } as never });
    expect(await waitOf(fresh, limited)).toMatchObject({ reason: 'rate_limit', message: expect.stringMatching(/^at its turn; .*at most 2 per second/), until: new Date(NOW + 600_000).toISOString() });
    // A failed row waits for its schedule step, busy destination or not; so does a fresh one where nothing is busy.
    expect(await waitOf(delivery(), full)).toMatchObject({ reason: 'retry_schedule' });
    expect(await waitOf(fresh, sources())).toMatchObject({ reason: 'retry_schedule' });
  });

  it('a removed rule, a disabled rule, and rules that cannot be read', async () => {
    expect(await waitOf(delivery({ ruleId: 'gone' }), sources())).toMatchObject({ reason: 'rule_removed' });
    const disabled = sources({ rules: { hash: 'h', rules: [rule('sink', { enabled: false })], loadedAt: new Date(NOW), files: [] } as never });
    expect(await waitOf(delivery(), disabled)).toMatchObject({ reason: 'rule_disabled', until: null });
    expect(await waitOf(delivery(), sources({ rules: null }))).toMatchObject({ reason: 'retry_schedule', message: expect.stringContaining('could not be read') });
  });

  it('the head of a blocked key waits on its own schedule; the others wait behind it', async () => {
    const blocked = [{ key: 'k', head: { deliveryId: 5, eventId: 1, attempts: 1, blockedSince: NOW - 9_000, nextAttemptAt: NOW + 5_000, lastStatus: 503, lastError: null }, waiting: 1 }];
    expect(await waitOf(delivery({ id: 5, orderKey: 'k' }), sources({ blocked }))).toMatchObject({ reason: 'retry_schedule' });
    expect(await waitOf(delivery({ orderKey: 'k' }), sources({ blocked }))).toMatchObject({ reason: 'order_blocked', blockedBy: 5, until: new Date(NOW + 5_000).toISOString() });
  });
});
