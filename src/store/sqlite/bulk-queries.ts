import type { BetterSqlite3 } from '../../sqlite-driver.js';
import type { BulkDeliveryFilter } from '../bulk-store.js';
import { eventSelectionSql } from './event-filter-sql.js';

/** Bulk retry of dead-lettered deliveries, one bounded batch per call (the store runs it in one transaction). */
export class BulkQueries {
  constructor(private readonly db: BetterSqlite3.Database) {}

  private deadWhere(filter: BulkDeliveryFilter): { sql: string; params: unknown[] } {
    const { ruleId, eventId, afterId, todaysRules, ...eventFilter } = filter;
    const events = eventSelectionSql(eventFilter, 'e');
    const where = [`d.state = 'dead'`, events.sql];
    const params: unknown[] = [...events.params];
    if (ruleId !== undefined) { where.push('d.rule_id = ?'); params.push(ruleId); }
    if (eventId !== undefined) { where.push('d.event_id = ?'); params.push(eventId); }
    if (afterId !== undefined) { where.push('d.id > ?'); params.push(afterId); }
    if (todaysRules !== undefined) {
      const sent = `(d.rule_id IN (SELECT value FROM json_each(?)) OR d.rule_set_hash IN (SELECT hash FROM rule_sets WHERE kind = 'one-off'))`;
      where.push(todaysRules.removed ? `NOT ${sent}` : sent);
      params.push(JSON.stringify(todaysRules.ids));
    }
    return { sql: where.join(' AND '), params };
  }

  countDeadByRule(filter: BulkDeliveryFilter): Map<string, number> {
    const where = this.deadWhere(filter);
    const rows = this.db
      .prepare<unknown[], { rule_id: string; n: number }>(`SELECT d.rule_id, count(*) AS n FROM deliveries d JOIN events e ON e.id = d.event_id WHERE ${where.sql} GROUP BY d.rule_id ORDER BY d.rule_id`)
      .all(...where.params);
    return new Map(rows.map((r) => [r.rule_id, r.n]));
  }

  countDead(filter: BulkDeliveryFilter): number {
    const where = this.deadWhere(filter);
    return this.db
      .prepare<unknown[], { n: number }>(`SELECT count(*) AS n FROM deliveries d JOIN events e ON e.id = d.event_id WHERE ${where.sql}`)
      .get(...where.params)!.n;
  }

  /**
   * Makes up to `limit` matching dead deliveries (ascending id) pending and due at `now`; returns their ids.
   * An ordered rule's rows still need their new place in their key (`OutboxQueries.joinBackOfKeys`).
   */
  retryDead(filter: BulkDeliveryFilter, limit: number, now: number): number[] {
    const where = this.deadWhere(filter);
    return this.db
      .prepare<unknown[], { id: number }>(`
        UPDATE deliveries SET state = 'pending', next_attempt_at = ?, lease_token = NULL, dead_reason = NULL, blocked_since = NULL, updated_at = ?
        WHERE id IN (SELECT d.id FROM deliveries d JOIN events e ON e.id = d.event_id WHERE ${where.sql} ORDER BY d.id LIMIT ?)
        RETURNING id`)
      .all(now, now, ...where.params, limit)
      .map((row) => row.id)
      .sort((a, b) => a - b);
  }
}
