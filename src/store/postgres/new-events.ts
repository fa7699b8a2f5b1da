import type pg from 'pg';
import type { EventSearch } from '../event-store.js';
import type { NewEventRead, NewEvents, StreamPosition, StreamStart } from '../new-event-store.js';
import type { EventToLearn } from '../schema-store.js';
import { LEARN_COLUMNS, newEventColumns, toEventToLearn, toNewEvent, type EventRow } from '../sqlite/event-rows.js';
import { eventSelectionSql } from './event-filter-sql.js';
import { readEventRow } from '../storable-text.js';
import { namedByShape, SqlParams } from './sql-params.js';

/**
 * Every transaction of this database with an id below this had finished when the statement's snapshot was
 * taken, and every one that commits later has an id at or above it. pg_current_snapshot() is the statement's
 * own snapshot, so the rows a statement sees and this horizon agree. Ids are shared by the whole server:
 * a transaction still open in another database (another application's, a bulk load) writes no event here
 * and does not hold the horizon back (pg_stat_activity shows every role where each transaction id is); a
 * prepared transaction, in no backend, does.
 */
const HORIZON = `(SELECT least(pg_snapshot_xmax(s), (SELECT min(x) FROM pg_snapshot_xip(s) AS x WHERE NOT EXISTS (
    SELECT 1 FROM pg_stat_activity a WHERE a.backend_xid = x::xid AND a.datname <> current_database())))
  FROM pg_current_snapshot() AS s)`;

/**
 * How far before a position's time a later commit's event may have been written: the wait of a group commit
 * and the clocks of the nodes (written_at is the receiving node's time) both fit in it many times over.
 */
export const WRITTEN_SLACK_MS = 60 * 60_000;
/** Positions whose time this node remembers (those its reads handed out): the newest are kept. */
const REMEMBERED_POSITIONS = 10_000;
/**
 * The time from which a read at the horizon still finds every event: the start of the oldest transaction of
 * this database holding an id (its events were written after it began, less the group commit's wait), or
 * now. Another database's transactions write no event here.
 */
const SINCE = `(extract(epoch FROM least(clock_timestamp(),
  (SELECT min(xact_start) FROM pg_stat_activity WHERE backend_xid IS NOT NULL AND datname = current_database()))) * 1000)::bigint`;

const positionKey = (position: StreamPosition): string => `${position.tx}:${position.id}`;

interface NewEventRow extends EventRow {
  horizon: string;
  since: string;
  written_at: string | null;
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
 * transaction in this database (a bulk import, a migration) holds every stream back until it ends.
 */
export class NewEventQueries {
  /**
   * By position (`tx:id`): a time no event committed after it was written before, less WRITTEN_SLACK_MS. A
   * read from a known position then reads only the partitions from that time on (written_at is their key),
   * however long the history; one from a position this node did not hand out reads them all, once.
   */
  private readonly writtenFrom = new Map<string, number>();

  constructor(private readonly db: pg.Pool) {}

  private remember(position: StreamPosition, writtenAt: number): void {
    const key = positionKey(position);
    this.writtenFrom.delete(key);
    this.writtenFrom.set(key, writtenAt - WRITTEN_SLACK_MS);
    if (this.writtenFrom.size > REMEMBERED_POSITIONS) this.writtenFrom.delete(this.writtenFrom.keys().next().value!);
  }

  async streamPosition(start: StreamStart): Promise<StreamPosition> {
    if ('afterEventId' in start) {
      // The event's own position; for one pruned meanwhile (or never stored), just before the next one.
      const { rows } = await this.db.query<{ tx: string; id: number }>('SELECT tx::text AS tx, id FROM events WHERE id >= $1 ORDER BY id LIMIT 1', [start.afterEventId]);
      const found = rows[0];
      if (found) return { tx: found.tx, id: found.id === start.afterEventId ? found.id : found.id - 1 };
    } else if ('receivedFrom' in start) {
      const params = new SqlParams();
      const where = eventSelectionSql({ receivedFrom: start.receivedFrom }, params);
      const { rows } = await this.db.query<{ tx: string | null }>(`SELECT min(e.tx)::text AS tx FROM events e WHERE ${where}`, params.values);
      if (rows[0]!.tx !== null) return { tx: rows[0]!.tx, id: 0 };
    }
    const { rows } = await this.db.query<{ tx: string }>(`SELECT ${HORIZON}::text AS tx`);
    return { tx: rows[0]!.tx, id: 0 };
  }

  read<B extends boolean>(filter: EventSearch, after: StreamPosition, limit: number, withBodies: B): Promise<NewEvents<NewEventRead<B>>> {
    // `e.*` holds tx and written_at already.
    const columns = withBodies ? newEventColumns(true) : `${newEventColumns(false)}, e.tx, e.written_at`;
    return this.readAs(filter, after, limit, columns, (row) => toNewEvent(readEventRow(row), withBodies));
  }

  /** The same read of every event, with only the columns schema learning needs. */
  readToLearn(after: StreamPosition, limit: number): Promise<NewEvents<EventToLearn>> {
    return this.readAs({}, after, limit, `${LEARN_COLUMNS}, e.tx, e.written_at`, (row) => toEventToLearn(readEventRow(row)));
  }

  /** `columns` must include e.id, e.tx and e.written_at: the position is made of them. */
  private async readAs<E extends { id: number }>(filter: EventSearch, after: StreamPosition, limit: number, columns: string, toEvent: (row: EventRow) => E): Promise<NewEvents<E>> {
    const from = after.tx === null ? await this.streamPosition({ afterEventId: after.id }) : after;
    const params = new SqlParams();
    const where = eventSelectionSql(filter, params);
    // Events are in commit order by (tx, id); a later commit's were written after the position's time, less
    // the slack: the bound prunes the partitions before it and leaves out no event the cursor would take.
    const writtenFrom = this.writtenFrom.get(positionKey(from)) ?? Number.MIN_SAFE_INTEGER;
    // The cursor's values reach the plan as sub-selects, which the planner cannot see: its plan is the same for
    // every value (a merge of each partition's (tx, id) index, the partitions before the bound skipped when it
    // runs), so a prepared read plans once per connection, and a cursor inside a large transaction (an import)
    // is not planned as a few rows to sort.
    const written = `(SELECT ${params.add(writtenFrom)}::bigint)`;
    const cursor = `(e.tx, e.id) > ((SELECT ${params.add(from.tx)}::xid8), (SELECT ${params.add(from.id)}::bigint)) AND e.written_at >= ${written}`;
    // One statement, so the rows, the horizon and whether later commits wait behind it share one snapshot.
    const text = `WITH h AS MATERIALIZED (SELECT ${HORIZON} AS horizon, ${SINCE} AS since),
       b AS MATERIALIZED (SELECT h.*, EXISTS (SELECT 1 FROM events x WHERE x.tx >= h.horizon AND x.written_at >= ${written}) AS held_back FROM h),
       r AS (SELECT ${columns}, e.tx::text AS tx_text FROM events e, h WHERE ${cursor} AND e.tx < h.horizon AND ${where} ORDER BY e.tx, e.id LIMIT (SELECT ${params.add(limit)}::int))
       SELECT b.horizon::text AS horizon, b.since::text AS since, b.held_back, r.*
       FROM b LEFT JOIN r ON true ORDER BY r.tx, r.id`;
    const { rows } = await this.db.query<NewEventRow>({ ...namedByShape('new_events', text), values: params.values });
    const first = rows[0]!;
    const found = rows.filter((row) => row.tx_text !== null);
    const events = found.map(toEvent);
    let position: StreamPosition;
    if (found.length === limit) {
      position = { tx: found.at(-1)!.tx_text, id: found.at(-1)!.id };
      this.remember(position, Math.min(...found.map((row) => Number(row.written_at))));
    } else if (compareTx(first.horizon, from.tx!) > 0) {
      position = { tx: first.horizon, id: 0 };
      this.remember(position, Math.min(Number(first.since), ...found.map((row) => Number(row.written_at))));
    } else position = from;
    return { events, position, heldBack: first.held_back };
  }
}
