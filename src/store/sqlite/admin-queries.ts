import type { BetterSqlite3 } from '../../sqlite-driver.js';
import type { EventPosition, EventSearch, EventPage } from '../event-store.js';
import type { DeliveryCounts } from '../outbox-store.js';
import { coarseTerm, coarseTerms } from './coarse-columns.js';
import { deliveryStateSql } from './delivery-state-sql.js';
import { SUMMARY_COLUMNS, toEventSummary, type EventRow } from './event-rows.js';
import { keyParam, keyValue, withExactKeys } from './key-text.js';

// Equality filters, finest first: the first one given drives the query through its (column, id) index.
const FINE_COLUMNS: [keyof EventSearch, string][] = [
  ['transferId', 'transfer_id'], ['email', 'email'], ['walletAddress', 'wallet_address'], ['checkoutId', 'checkout_id'],
];

/**
 * What a page query walks: one column's (column, id) index (a fine column, or a coarse column's partial
 * index of rare values), the time index, deliveries (state, event_id), or the rowid.
 */
export type SearchDriver = { kind: 'column'; key: keyof EventSearch; column: string } | { kind: 'time' } | { kind: 'state' } | { kind: 'rowid' };

type CoarseDriver = Extract<SearchDriver, { kind: 'column' | 'state' }>;

/**
 * Drivers worth comparing when several coarse filters are given: rare values (each has a partial index) and
 * the delivery state. A common value has no index: most rows match it, so the rowid walk serves it.
 */
export function coarseCandidates(search: EventSearch): CoarseDriver[] {
  const columns = coarseTerms(search, 'e')
    .filter((term) => term.indexed)
    .map(({ spec }): CoarseDriver => ({ kind: 'column', key: spec.key, column: spec.column }));
  // Only unsettled rows are indexed by state (migration 006): "has a delivered delivery" is checked per event.
  return search.deliveryState !== undefined && search.deliveryState !== 'delivered' ? [{ kind: 'state' }, ...columns] : columns;
}

/** The finest filter drives; then a time range; then the rarest coarse filter (`pickCoarse` knows the data). */
export function chooseDriver(search: EventSearch, pickCoarse: (candidates: CoarseDriver[]) => SearchDriver = (c) => c[0]!): SearchDriver {
  const fine = FINE_COLUMNS.find(([key]) => search[key] !== undefined);
  if (fine) return { kind: 'column', key: fine[0], column: fine[1] };
  if (search.receivedFrom !== undefined || search.receivedTo !== undefined) return { kind: 'time' };
  const candidates = coarseCandidates(search);
  if (candidates.length === 0) return { kind: 'rowid' };
  return candidates.length === 1 ? candidates[0]! : pickCoarse(candidates);
}

interface SearchSql {
  sql: string;
  params: unknown[];
}

/**
 * Builds the page query so that SQLite reads one index range from the cursor on, whatever the filter:
 * the planner has no statistics, so the driving index is chosen here (`chooseDriver`). Every other indexed
 * filter is checked per row by probing its own index (`EXISTS ... x.col = ? AND x.id = <row>`), which
 * touches a small index page instead of the event row with its body; the row is read only for rows that
 * match. A common coarse value (no index) is checked on the row: nearly every row has it. A time range
 * orders by (received_at, id), the only index that serves both the range and the order.
 */
export function eventSearchSql(search: EventSearch, page: { limit: number; after?: EventPosition }, driver = chooseDriver(search)): SearchSql {
  const where: string[] = [];
  const params: unknown[] = [];
  const rowId = driver.kind === 'state' ? 'd.event_id' : 'e.id';
  for (const [key, column] of FINE_COLUMNS) {
    if (search[key] === undefined) continue;
    const param = keyParam(column);
    where.push(driver.kind === 'column' && driver.key === key ? `e.${column} = ${param}` : `EXISTS (SELECT 1 FROM events x WHERE x.${column} = ${param} AND x.id = ${rowId})`);
    params.push(keyValue(column, search[key] as string));
  }
  for (const term of coarseTerms(search, 'e')) {
    const drives = driver.kind === 'column' && driver.key === term.spec.key;
    if (drives || !term.indexed) {
      where.push(term.sql);
    } else {
      where.push(`EXISTS (SELECT 1 FROM events x WHERE ${coarseTerm(term.spec, search[term.spec.key]!, 'x').sql} AND x.id = ${rowId})`);
    }
    params.push(...term.params);
  }
  if (search.deliveryState !== undefined && driver.kind !== 'state') {
    where.push(`EXISTS (SELECT 1 FROM deliveries ds WHERE ${deliveryStateSql('ds', search.deliveryState)} AND ds.event_id = ${rowId})`);
  }

  if (search.receivedFrom !== undefined || search.receivedTo !== undefined) {
    // Upper bound: the range end or the cursor, whichever is lower; rows tied with the cursor's time are
    // told apart by id. When a finer filter drives, its few rows are checked and sorted instead.
    const column = driver.kind === 'time' ? 'e.received_at' : '+e.received_at';
    const bounds = [search.receivedTo !== undefined ? search.receivedTo - 1 : undefined, page.after?.receivedAt].filter((b) => b !== undefined);
    if (search.receivedFrom !== undefined) { where.push(`${column} >= ?`); params.push(search.receivedFrom); }
    if (bounds.length > 0) { where.push(`${column} <= ?`); params.push(Math.min(...bounds)); }
    if (page.after) { where.push('NOT (e.received_at = ? AND e.id >= ?)'); params.push(page.after.receivedAt, page.after.id); }
    return {
      sql: `SELECT ${SUMMARY_COLUMNS} FROM events e WHERE ${where.join(' AND ')} ORDER BY e.received_at DESC, e.id DESC LIMIT ?`,
      params: [...params, page.limit],
    };
  }

  if (driver.kind === 'state') {
    // Newest event with a delivery in that state first, from deliveries_unsettled_event (state, event_id);
    // CROSS JOIN keeps deliveries the outer loop, GROUP BY folds an event's several deliveries into one row.
    const outer = [deliveryStateSql('d', search.deliveryState!)];
    const outerParams: unknown[] = [];
    if (page.after) { outer.push('d.event_id < ?'); outerParams.push(page.after.id); }
    return {
      sql: `SELECT ${SUMMARY_COLUMNS} FROM deliveries d CROSS JOIN events e ON e.id = d.event_id
        WHERE ${[...outer, ...where].join(' AND ')} GROUP BY d.event_id ORDER BY d.event_id DESC LIMIT ?`,
      params: [...outerParams, ...params, page.limit],
    };
  }

  if (page.after) { where.push('e.id < ?'); params.push(page.after.id); }
  return { sql: `SELECT ${SUMMARY_COLUMNS} FROM events e WHERE ${where.join(' AND ') || '1'} ORDER BY e.id DESC LIMIT ?`, params: [...params, page.limit] };
}

/** Index entries counted at most when comparing coarse filters: enough to tell common from rare. */
const ESTIMATE_CAP = 100_000;
/** How long such a count is reused: value frequencies change slowly, and paging should not recount each time. */
const ESTIMATE_TTL_MS = 60_000;
const ESTIMATE_CACHE_SIZE = 256;
/** Distinct page queries kept prepared (one per filter combination and page kind). */
const STATEMENT_CACHE_SIZE = 64;

/** Delivery counts per rule (see `deliveryCountsByRule`). */
export const RULE_COUNT_SQL = {
  total: 'SELECT count(*) FROM deliveries WHERE rule_id = ?',
  pendingByRule: "SELECT rule_id, count(*) FROM deliveries INDEXED BY deliveries_due WHERE state = 'pending' GROUP BY rule_id",
  deadByRule: "SELECT rule_id, count(*) FROM deliveries WHERE state = 'dead' GROUP BY rule_id",
} as const;

/** Delivery counts of a page of events (see `deliveryCountsByEvent`): one lookup in deliveries_event per event. */
export const EVENT_COUNT_SQL = 'SELECT event_id, state, count(*) FROM deliveries WHERE event_id IN (SELECT value FROM json_each(?)) GROUP BY event_id, state';

/** The admin API's read queries, synchronous; the store decides the transaction. */
export class AdminQueries {
  private readonly countsOfRules: (ruleIds: readonly string[]) => Map<string, DeliveryCounts>;
  private readonly countsOfEvents: BetterSqlite3.Statement<[string], [number, keyof DeliveryCounts, number]>;
  private readonly statements = new Map<string, BetterSqlite3.Statement<unknown[], unknown>>();
  private readonly estimates = new Map<string, { rows: number; at: number }>();

  constructor(private readonly db: BetterSqlite3.Database) {
    // Migration 006: pending rows are counted from deliveries_due (it carries rule_id), dead ones from
    // deliveries_dead_rule, all of a rule's from deliveries_rule_id; each read from its index alone.
    const totalOfRule = db.prepare<[string], number>(RULE_COUNT_SQL.total).pluck();
    const pendingByRule = db.prepare<[], [string, number]>(RULE_COUNT_SQL.pendingByRule).raw();
    const deadByRule = db.prepare<[], [string, number]>(RULE_COUNT_SQL.deadByRule).raw();
    this.countsOfEvents = db.prepare<[string], [number, keyof DeliveryCounts, number]>(EVENT_COUNT_SQL).raw();
    // One read transaction: the three counts see the same moment.
    this.countsOfRules = db.transaction((ruleIds: readonly string[]) => {
      const pending = new Map(pendingByRule.all());
      const dead = new Map(deadByRule.all());
      return new Map(
        ruleIds.map((ruleId): [string, DeliveryCounts] => {
          const counts = { pending: pending.get(ruleId) ?? 0, dead: dead.get(ruleId) ?? 0 };
          return [ruleId, { ...counts, delivered: totalOfRule.get(ruleId)! - counts.pending - counts.dead }];
        }),
      );
    });
  }

  listEvents(search: EventSearch, page: { limit: number; after?: EventPosition }): EventPage {
    const driver = chooseDriver(search, (candidates) => this.rarest(search, candidates));
    // One row more than asked tells whether another page exists.
    const query = eventSearchSql(search, { ...page, limit: page.limit + 1 }, driver);
    const rows = this.prepared<EventRow>(query.sql).all(...query.params);
    const items = withExactKeys(this.db, rows.slice(0, page.limit)).map(toEventSummary);
    const last = items.at(-1);
    return { items, next: rows.length > page.limit && last ? { id: last.id, receivedAt: last.receivedAt } : null };
  }

  private prepared<Row>(sql: string): BetterSqlite3.Statement<unknown[], Row> {
    let statement = this.statements.get(sql);
    if (!statement) {
      if (this.statements.size >= STATEMENT_CACHE_SIZE) this.statements.delete(this.statements.keys().next().value!);
      statement = this.db.prepare<unknown[], unknown>(sql);
      this.statements.set(sql, statement);
    }
    return statement as BetterSqlite3.Statement<unknown[], Row>;
  }

  /** The candidate with the fewest rows (counted from its index only, up to a cap, and remembered a while). */
  private rarest(search: EventSearch, candidates: CoarseDriver[]): SearchDriver {
    const sized = candidates.map((candidate) => {
      if (candidate.kind === 'state') {
        return { candidate, rows: this.estimate(`SELECT count(*) AS n FROM (SELECT 1 FROM deliveries d WHERE ${deliveryStateSql('d', search.deliveryState!)} LIMIT ?)`, []) };
      }
      // Counted through the column's partial index: the term repeats its condition.
      const term = coarseTerms({ [candidate.key]: search[candidate.key] }, 'e')[0]!;
      return { candidate, rows: this.estimate(`SELECT count(*) AS n FROM (SELECT 1 FROM events e WHERE ${term.sql} LIMIT ?)`, term.params) };
    });
    return sized.reduce((best, next) => (next.rows < best.rows ? next : best)).candidate;
  }

  private estimate(sql: string, params: unknown[]): number {
    const key = `${sql}\u0000${params.map(String).join('\u0000')}`;
    const now = Date.now();
    const known = this.estimates.get(key);
    if (known && now - known.at < ESTIMATE_TTL_MS) return known.rows;
    const rows = this.prepared<{ n: number }>(sql).get(...params, ESTIMATE_CAP)!.n;
    this.estimates.delete(key);
    if (this.estimates.size >= ESTIMATE_CACHE_SIZE) this.estimates.delete(this.estimates.keys().next().value!);
    this.estimates.set(key, { rows, at: now });
    return rows;
  }

  deliveryCountsByRule(ruleIds: readonly string[]): Map<string, DeliveryCounts> {
    return this.countsOfRules(ruleIds);
  }

  deliveryCountsByEvent(eventIds: readonly number[]): Map<number, DeliveryCounts> {
    const counts = new Map(eventIds.map((id): [number, DeliveryCounts] => [id, { pending: 0, delivered: 0, dead: 0 }]));
    if (eventIds.length === 0) return counts;
    for (const [eventId, state, count] of this.countsOfEvents.all(JSON.stringify(eventIds))) counts.get(eventId)![state] = count;
    return counts;
  }
}
