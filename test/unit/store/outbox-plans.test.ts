import { afterAll, describe, expect, it } from 'vitest';
import { DUE_DELIVERY_IDS_SQL } from '../../../src/store/sqlite/outbox.js';
import { AGED_EVENT_IDS_SQL } from '../../../src/store/sqlite/retention-queries.js';
import { SqliteStore } from '../../../src/store/sqlite/sqlite-store.js';
import { makeTempDir, removeTempDirs } from '../../helpers/temp-dir.js';

afterAll(() => removeTempDirs());

/** The worker's hot queries must walk the partial due-index: a claim costs its batch, never the backlog. */
describe('outbox query plans', () => {
  it('claims and finds the next due row through the due index, without sorting the backlog', async () => {
    const store = new SqliteStore({ dataDir: makeTempDir(), durability: 'normal' });
    try {
      const plan = (sql: string, ...params: unknown[]) =>
        store.db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params).map((r) => (r as { detail: string }).detail).join('\n');
      const claim = plan(DUE_DELIVERY_IDS_SQL, 1, 1, 10);
      expect(claim).toMatch(/USING (COVERING )?INDEX deliveries_due/);
      expect(claim).not.toMatch(/TEMP B-TREE/);
      // The statements the store really runs compile against the index (INDEXED BY fails if it is missing).
      await expect(store.claimDueDeliveries({ limit: 10, leaseMs: 1000 })).resolves.toEqual([]);
      await expect(store.nextDueAt()).resolves.toBeNull();
      await expect(store.outboxStats()).resolves.toMatchObject({ pending: 0, due: 0 });
    } finally {
      await store.close();
    }
  });

  it('walks events by receipt time in the index alone when looking for aged events, imported ones included', async () => {
    const store = new SqliteStore({ dataDir: makeTempDir(), durability: 'normal' });
    try {
      const plan = store.db.prepare(`EXPLAIN QUERY PLAN ${AGED_EVENT_IDS_SQL}`).all(1, 1, 10).map((r) => (r as { detail: string }).detail).join('\n');
      // Covering: an imported event too young to go is stepped over without reading its row.
      expect(plan).toMatch(/SCAN e USING COVERING INDEX events_received_at|SEARCH e USING COVERING INDEX events_received_at/);
      expect(plan).not.toMatch(/TEMP B-TREE/);
      // Whether an event still has a pending delivery is one probe of the unsettled-state index.
      expect(plan).toMatch(/USING COVERING INDEX deliveries_unsettled_event \(state=\? AND event_id=\?\)/);
    } finally {
      await store.close();
    }
  });

  it('lists dead letters newest first and counts the outbox from partial indexes of unsettled rows only', async () => {
    const store = new SqliteStore({ dataDir: makeTempDir(), durability: 'normal' });
    try {
      // The plans of the statements these calls really prepare (placeholders bound to 1).
      const plans: string[] = [];
      const prepare = store.db.prepare.bind(store.db);
      const explain = (sql: string): string =>
        prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...Array.from(sql.matchAll(/\?/g), () => 1)).map((r) => (r as { detail: string }).detail).join(' | ');
      store.db.prepare = ((sql: string) => {
        plans.push(explain(sql));
        return prepare(sql);
      }) as typeof store.db.prepare;
      await store.listDeliveries({ state: 'dead' }, { limit: 50 });
      await store.listDeliveries({ state: 'dead', ruleId: 'a' }, { limit: 50 });
      await store.outboxStats();
      store.db.prepare = prepare;
      expect(plans[0]).toMatch(/^SCAN deliveries USING INDEX deliveries_dead_id$/);
      expect(plans[1]).toMatch(/^SEARCH deliveries USING INDEX deliveries_dead_rule \(rule_id=\?\)$/);
      expect(plans[2]).toContain('USING COVERING INDEX deliveries_due');
      expect(plans[2]).toContain('USING COVERING INDEX deliveries_dead_id');
      expect(plans.join(' | ')).not.toMatch(/TEMP B-TREE|SCAN deliveries$|SCAN deliveries \|/);
    } finally {
      await store.close();
    }
  });
});
