import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SqliteStore } from '../../../src/store/sqlite/sqlite-store.js';
import type { EventFilter, EventSearch, EventSummary, Validation } from '../../../src/store/event-store.js';
import { makeTempDir, removeTempDirs } from '../../helpers/temp-dir.js';

// Event name, source and validation are indexed only for their rare values (migration 004); the common
// ones are found by walking the table. Whichever path a filter takes, it must find exactly the rows that
// match: every combination is checked against a plain filter of the same rows, across pages.
const EVENTS = ['transfer:succeeded', 'transfer:refunded', 'checkout:created'];
const SOURCES = ['checkout', 'shop-b', 'shop-c'];
const VALIDATIONS: Validation[] = ['valid', 'unrecognised'];

interface Row {
  id: number;
  event: string;
  source: string;
  validation: Validation;
  state: 'dead' | 'pending' | null;
}

let store: SqliteStore;
const rows: Row[] = [];

beforeAll(async () => {
  store = new SqliteStore({ dataDir: makeTempDir(), durability: 'normal' });
  for (let i = 0; i < 240; i++) {
    // Skewed like real traffic: mostly the common values; an imported "valid" row of another event name too.
    const event = EVENTS[i % 7 === 0 ? 1 : i % 11 === 0 ? 2 : 0]!;
    const source = SOURCES[i % 5 === 0 ? 1 : i % 13 === 0 ? 2 : 0]!;
    const validation: Validation = event === EVENTS[0] || i % 3 === 0 ? 'valid' : 'unrecognised';
    const state = i % 6 === 0 ? 'dead' : i % 9 === 0 ? 'pending' : null;
    const saved = await store.saveEvent({
      source, event, transferId: `tr-${i}`, checkoutId: null, email: null, walletAddress: null, validation,
      receivedAt: 1_000 + i, headers: {}, body: Buffer.from('{}'),
      deliveries: state ? [{ ruleId: 'r', ruleSetHash: 'h', body: null, contentType: 'application/json', ...(state === 'dead' && { deadReason: 'gone' }) }] : [],
    });
    rows.push({ id: saved.id, event, source, validation, state });
  }
});

afterAll(async () => {
  await store.close();
  removeTempDirs();
});

function filters(): EventSearch[] {
  const all: EventSearch[] = [];
  for (const event of [undefined, ...EVENTS]) {
    for (const source of [undefined, ...SOURCES]) {
      for (const validation of [undefined, ...VALIDATIONS]) {
        for (const deliveryState of [undefined, 'dead', 'pending'] as const) {
          all.push({ ...(event && { event }), ...(source && { source }), ...(validation && { validation }), ...(deliveryState && { deliveryState }) });
        }
      }
    }
  }
  return all;
}

function expected(filter: EventSearch): number[] {
  return rows
    .filter((r) => (filter.event === undefined || r.event === filter.event) && (filter.source === undefined || r.source === filter.source))
    .filter((r) => (filter.validation === undefined || r.validation === filter.validation) && (filter.deliveryState === undefined || r.state === filter.deliveryState))
    .map((r) => r.id)
    .sort((a, b) => b - a);
}

async function searchAll(filter: EventSearch): Promise<number[]> {
  const ids: number[] = [];
  let after: { id: number; receivedAt: number } | undefined;
  for (;;) {
    const page = await store.listEvents(filter, { limit: 7, ...(after && { after }) });
    ids.push(...page.items.map((item: EventSummary) => item.id));
    if (!page.next) return ids;
    after = page.next;
  }
}

describe('event name, source and validation filters find exactly the matching events, rare value or common', () => {
  it('admin search, every combination, paged', async () => {
    for (const filter of filters()) {
      expect(await searchAll(filter), JSON.stringify(filter)).toEqual(expected(filter));
      // The same through the time index.
      expect(await searchAll({ ...filter, receivedFrom: 0 }), `${JSON.stringify(filter)} by time`).toEqual(expected(filter));
    }
  });

  it('list, count and export selections, every combination', async () => {
    for (const filter of filters()) {
      const want = expected(filter);
      expect(await store.countEvents(filter), JSON.stringify(filter)).toBe(want.length);
      const exported = await store.listEventsForExport(filter, 1000);
      expect(exported.map((e) => e.id), JSON.stringify(filter)).toEqual([...want].reverse());
      // Replay's lean read selects the same events, with what rules read of them and nothing else.
      expect(await store.listEventBodies(filter, 1000), JSON.stringify(filter)).toEqual(exported.map(({ id, source, event, body, ruleSetHash, quarantine }) => ({ id, source, event, body, ruleSetHash, quarantine })));
      if (filter.deliveryState === undefined) {
        const listed = await store.listEvents(filter as EventFilter, { limit: 1000 });
        expect(listed.items.map((e) => e.id), JSON.stringify(filter)).toEqual(want);
      }
    }
  });
});
