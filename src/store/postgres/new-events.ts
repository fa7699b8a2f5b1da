import type pg from 'pg';
import type { EventSearch } from '../event-store.js';
import type { NewEventRead, NewEvents, StreamPosition, StreamStart } from '../new-event-store.js';
import { newEventColumns, toNewEvent, type EventRow } from '../sqlite/event-rows.js';
import { eventSelectionSql } from './event-filter-sql.js';
import { readEventRow } from '../storable-text.js';
import { SqlParams } from './sql-params.js';

/**
 * Every transaction with an id below this had finished when the statement's snapshot was taken, and every
 * transaction that commits later has an id at or above it. pg_current_snapshot() is the statement's own
 * snapshot, so the rows a statement sees and this horizon agree.
 */
const HORIZON = 'pg_snapshot_xmin(pg_current_snapshot())';

interface NewEventRow extends EventRow {
  horizon: string;
  held_back: boolean;
  tx_text: string | null;
}

const compareTx = (a: string, b: string): number => {
  const [x, y] = [BigInt(a), BigInt(b)];
  return x < y ? -1 : x > y ? 1 : 0;
};

/**
 * Newly stored events in commit order (migration 003): by `(tx, id)`, only events whose transaction is older
 * than every transaction still open. A transaction that got id 100 and commits after the one that got 101
 * has the lower `tx`, and 101 is not read while it is open, so neither is skipped nor read twice. What
 * this costs: an event is read once every transaction older than its own has finished; a long write
 * transaction anywhere on the server (a bulk import, a migration) holds every stream back until it ends.
 */
export class NewEventQueries {
  constructor(private readonly db: pg.Pool) {}

  async streamPosition(start: StreamStart): Promise<StreamPosition> {
    if ('afterEventId' in start) {
      // The event's own position; for one pruned meanwhile (or never stored), just before the next one.
      const { rows } = await this.db.query<{ tx: string; id: number }>('SELECT tx::text AS tx, id FROM events WHERE id >= $1 ORDER BY id LIMIT 1', [start.afterEventId]);
      const found = rows[0];
      if (found) return { tx: found.tx, id: found.id === start.afterEventId ? found.id : found.id - 1 };
    } else if ('receivedFrom' in start) {
      const { rows } = await this.db.query<{ tx: string | null }>('SELECT min(tx)::text AS tx FROM events WHERE received_at >= $1', [start.receivedFrom]);
      if (rows[0]!.tx !== null) return { tx: rows[0]!.tx, id: 0 };
    }
    const { rows } = await this.db.query<{ tx: string }>(`SELECT ${HORIZON}::text AS tx`);
    return { tx: rows[0]!.tx, id: 0 };
  }

  async read<B extends boolean>(filter: EventSearch, after: StreamPosition, limit: number, withBodies: B): Promise<NewEvents<NewEventRead<B>>> {
    const from = after.tx === null ? await this.streamPosition({ afterEventId: after.id }) : after;
    const params = new SqlParams();
    const where = eventSelectionSql(filter, params);
    const cursor = `(e.tx, e.id) > (${params.add(from.tx)}::xid8, ${params.add(from.id)})`;
    // `e.*` holds tx already; the outer query orders by it.
    const columns = withBodies ? newEventColumns(true) : `${newEventColumns(false)}, e.tx`;
    // One statement, so the rows, the horizon and whether later commits wait behind it share one snapshot.
    const { rows } = await this.db.query<NewEventRow>(
      `WITH h AS (SELECT ${HORIZON} AS horizon),
       r AS (SELECT ${columns}, e.tx::text AS tx_text FROM events e, h WHERE ${cursor} AND e.tx < h.horizon AND ${where} ORDER BY e.tx, e.id LIMIT ${params.add(limit)})
       SELECT h.horizon::text AS horizon, EXISTS (SELECT 1 FROM events x WHERE x.tx >= h.horizon) AS held_back, r.*
       FROM h LEFT JOIN r ON true ORDER BY r.tx, r.id`,
      params.values,
    );
    const first = rows[0]!;
    const found = rows.filter((row) => row.tx_text !== null);
    const events = found.map((row) => toNewEvent(readEventRow(row), withBodies));
    let position: StreamPosition;
    if (found.length === limit) position = { tx: found.at(-1)!.tx_text, id: found.at(-1)!.id };
    else position = compareTx(first.horizon, from.tx!) > 0 ? { tx: first.horizon, id: 0 } : from;
    return { events, position, heldBack: first.held_back };
  }
}
