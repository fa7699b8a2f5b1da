import type { BetterSqlite3 } from '../../sqlite-driver.js';
import type { EventSearch } from '../event-store.js';
import type { NewEventRead, NewEvents, StreamPosition, StreamStart } from '../new-event-store.js';
import { eventSelectionSql } from './event-filter-sql.js';
import type { EventToLearn } from '../schema-store.js';
import { LEARN_COLUMNS, newEventColumns, toEventToLearn, toNewEvent, type EventRow } from './event-rows.js';
import { withExactKeys } from './key-text.js';

/**
 * Newly stored events in commit order, which on SQLite is id order: one writer at a time hands out ids
 * in increasing order, so every id up to the newest one seen has committed and a reader may move past it.
 * Works on a read-only connection too (`hookrelay listen` beside a data dir another process writes).
 */
export class NewEventQueries {
  private readonly newestId;
  private readonly firstIdFrom;
  /** One statement per filter shape: every open stream reads on every commit, so none is prepared twice. */
  private readonly reads = new Map<string, BetterSqlite3.Statement<unknown[], EventRow>>();

  constructor(private readonly db: BetterSqlite3.Database) {
    this.newestId = db.prepare<[], { id: number | null }>('SELECT max(id) AS id FROM events');
    this.firstIdFrom = db.prepare<[number], { id: number | null }>('SELECT min(id) AS id FROM events INDEXED BY events_received_at WHERE received_at >= ?');
  }

  private newest(): number {
    return this.newestId.get()!.id ?? 0;
  }

  streamPosition(start: StreamStart): StreamPosition {
    if ('afterEventId' in start) return { tx: null, id: start.afterEventId };
    if ('receivedFrom' in start) {
      const first = this.firstIdFrom.get(start.receivedFrom)!.id;
      if (first !== null) return { tx: null, id: first - 1 };
    }
    return { tx: null, id: this.newest() };
  }

  read<B extends boolean>(filter: EventSearch, after: StreamPosition, limit: number, withBodies: B): NewEvents<NewEventRead<B>> {
    return this.readAs(filter, after, limit, newEventColumns(withBodies), (row) => toNewEvent(row, withBodies));
  }

  /** The same read of every event, with only the columns schema learning needs. */
  readToLearn(after: StreamPosition, limit: number): NewEvents<EventToLearn> {
    return this.readAs({}, after, limit, LEARN_COLUMNS, toEventToLearn);
  }

  private readAs<E extends { id: number }>(filter: EventSearch, after: StreamPosition, limit: number, columns: string, toEvent: (row: EventRow) => E): NewEvents<E> {
    // The newest id first: a commit made after it (by another process) is read next time, not half now.
    const newest = this.newest();
    if (newest <= after.id) return { events: [], position: { tx: null, id: after.id }, heldBack: false };
    const where = eventSelectionSql({ ...filter, afterId: after.id, throughId: newest }, 'e');
    const sql = `SELECT ${columns} FROM events e WHERE ${where.sql} ORDER BY e.id LIMIT ?`;
    let statement = this.reads.get(sql);
    if (!statement) {
      statement = this.db.prepare<unknown[], EventRow>(sql);
      // Filters are few in practice; a client cycling through many only costs a prepare each.
      if (this.reads.size < 64) this.reads.set(sql, statement);
    }
    const events = withExactKeys(this.db, statement.all(...where.params, limit)).map(toEvent);
    const id = events.length === limit ? events.at(-1)!.id : newest;
    return { events, position: { tx: null, id }, heldBack: false };
  }
}
