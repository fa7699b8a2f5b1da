import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { SqliteStore } from '../../../src/store/sqlite/sqlite-store.js';
import { EVENT_COUNT_SQL, RULE_COUNT_SQL, chooseDriver, coarseCandidates, eventSearchSql, type SearchDriver } from '../../../src/store/sqlite/admin-queries.js';
import type { EventSearch } from '../../../src/store/event-store.js';
import { makeTempDir, removeTempDirs } from '../../helpers/temp-dir.js';

const stores: SqliteStore[] = [];
afterEach(async () => {
  await Promise.all(stores.splice(0).map((s) => s.close()));
});
afterAll(() => removeTempDirs());

function plan(store: SqliteStore, sql: string, params: unknown[]): string[] {
  return (store.db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as { detail: string }[]).map((row) => row.detail);
}

const FILTERS: EventSearch[] = [
  {},
  { event: 'transfer:refunded' },
  { source: 'other' },
  { validation: 'unrecognised' },
  { checkoutId: 'c' },
  { email: 'a@example.com' },
  { walletAddress: '0xabc' },
  { transferId: 'tr_1' },
  { deliveryState: 'dead' },
  { deliveryState: 'pending' },
  { deliveryState: 'delivered' },
  { deliveryState: 'pending', event: 'transfer:succeeded', validation: 'valid' },
  { deliveryState: 'dead', email: 'a@example.com' },
  { receivedFrom: 1 },
  { receivedFrom: 1, receivedTo: 2, event: 'transfer:succeeded', source: 'checkout' },
  { receivedTo: 2, deliveryState: 'dead' },
  { receivedFrom: 1, email: 'a@example.com' },
  { event: 'transfer:succeeded', source: 'checkout', validation: 'valid' },
  { email: 'a@example.com', event: 'transfer:succeeded', checkoutId: 'c' },
];

describe('admin list queries read one index range (EXPLAIN QUERY PLAN), never the whole table', () => {
  for (const filter of FILTERS) {
    it(`events ${JSON.stringify(filter)}`, () => {
      const store = new SqliteStore({ dataDir: makeTempDir(), durability: 'normal' });
      stores.push(store);
      // Several coarse filters: whichever the data makes the driver, the plan stays an index range.
      const chosen = chooseDriver(filter);
      const drivers: SearchDriver[] = chosen.kind === 'state' || chosen.kind === 'column' ? [chosen, ...coarseCandidates(filter)] : [chosen];
      for (const [driver, after] of drivers.flatMap((d) => [[d, undefined], [d, { id: 500_000, receivedAt: 1 }]] as const)) {
        const query = eventSearchSql(filter, { limit: 51, ...(after && { after }) }, driver);
        const details = plan(store, query.sql, query.params);
        // The unfiltered first page walks the table backwards by rowid and stops after `limit` rows.
        // So does a first page filtered only by common values (most rows match: no index for them).
        // Walking events_unrecognised_id whole is no table scan: that partial index holds only matching rows.
        const scans = details.filter((d) => d.startsWith('SCAN') && d !== 'SCAN e USING INDEX events_unrecognised_id');
        expect(scans, details.join(' | ')).toEqual(driver.kind === 'rowid' && !after ? ['SCAN e'] : []);
        // A sort is only acceptable over the few rows of a fine filter (one transfer id, one buyer).
        const fine = filter.transferId !== undefined || filter.email !== undefined;
        if (!fine) expect(details.filter((d) => d.includes('TEMP B-TREE')), details.join(' | ')).toEqual([]);
        const outerLoop = details[0]!;
        expect(outerLoop, details.join(' | ')).toMatch(/^(SEARCH (e|d) USING (INTEGER PRIMARY KEY|INDEX|COVERING INDEX)|SCAN e$|SCAN e USING INDEX events_unrecognised_id$)/);
      }
    });
  }

  const RARE: [EventSearch, string][] = [
    [{ event: 'transfer:refunded' }, 'events_other_event_id'],
    [{ source: 'other' }, 'events_other_source_id'],
    [{ validation: 'unrecognised' }, 'events_unrecognised_id'],
    [{ event: 'transfer:refunded', source: 'checkout', validation: 'unrecognised' }, 'events_other_event_id'],
  ];
  for (const [filter, index] of RARE) {
    it(`a rare value is read from its partial index: ${JSON.stringify(filter)}`, () => {
      const store = new SqliteStore({ dataDir: makeTempDir(), durability: 'normal' });
      stores.push(store);
      const query = eventSearchSql(filter, { limit: 51 });
      expect(plan(store, query.sql, query.params)[0]).toContain(`USING INDEX ${index}`);
    });
  }

  it('common values (the spec\'s event, the default source, valid) need no index: the page is a rowid walk', () => {
    expect(chooseDriver({ event: 'transfer:succeeded', source: 'checkout', validation: 'valid' })).toEqual({ kind: 'rowid' });
    expect(coarseCandidates({ event: 'transfer:succeeded', source: 'checkout', validation: 'valid' })).toEqual([]);
  });

  it('rule counts are read from indexes alone: all of a rule, its pending rows, its dead letters', () => {
    const store = new SqliteStore({ dataDir: makeTempDir(), durability: 'normal' });
    stores.push(store);
    expect(plan(store, RULE_COUNT_SQL.total, ['a'])).toEqual([expect.stringContaining('USING COVERING INDEX deliveries_rule_id (rule_id=?)')]);
    expect(plan(store, RULE_COUNT_SQL.pendingByRule, [])).toEqual([
      expect.stringMatching(/^SCAN deliveries USING COVERING INDEX deliveries_due$/),
      expect.stringContaining('TEMP B-TREE FOR GROUP BY'), // over the pending rows only
    ]);
    expect(plan(store, RULE_COUNT_SQL.deadByRule, [])).toEqual([expect.stringMatching(/^SCAN deliveries USING COVERING INDEX deliveries_dead_rule$/)]);
  });

  it('the forwarding summary of a page of events looks up each event in deliveries_event, never scans', () => {
    const store = new SqliteStore({ dataDir: makeTempDir(), durability: 'normal' });
    stores.push(store);
    const details = plan(store, EVENT_COUNT_SQL, ['[1,2,3]']);
    expect(details[0], details.join(' | ')).toBe('SEARCH deliveries USING INDEX deliveries_event (event_id=?)');
    expect(details.filter((d) => d.startsWith('SCAN') && !d.startsWith('SCAN json_each')), details.join(' | ')).toEqual([]);
  });

  it('only unsettled deliveries are indexed by state: "has a pending or dead delivery" reads deliveries_unsettled_event', () => {
    const store = new SqliteStore({ dataDir: makeTempDir(), durability: 'normal' });
    stores.push(store);
    for (const state of ['pending', 'dead'] as const) {
      const drivenByState = eventSearchSql({ deliveryState: state }, { limit: 51 }, { kind: 'state' });
      expect(plan(store, drivenByState.sql, drivenByState.params)[0]).toContain('USING COVERING INDEX deliveries_unsettled_event (state=?)');
      const checkedPerEvent = eventSearchSql({ deliveryState: state, email: 'a@example.com' }, { limit: 51 });
      expect(plan(store, checkedPerEvent.sql, checkedPerEvent.params).join(' | ')).toContain('USING COVERING INDEX deliveries_unsettled_event (state=? AND event_id=?)');
    }
    // Delivered rows are in no state index: that filter is a check per event, never a driver.
    expect(chooseDriver({ deliveryState: 'delivered' })).toEqual({ kind: 'rowid' });
    const delivered = eventSearchSql({ deliveryState: 'delivered' }, { limit: 51 });
    expect(plan(store, delivered.sql, delivered.params).join(' | ')).toContain('USING INDEX deliveries_event (event_id=?)');
  });
});
