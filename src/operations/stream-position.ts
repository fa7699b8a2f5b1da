import { parseDuration } from '../duration.js';
import { HookrelayError } from '../errors.js';
import type { NewEventReader, StreamPosition } from '../store/new-event-store.js';

const EVENT_ID = /^\d{1,15}$/;
/** A position that is not an event's own (PostgreSQL: where a stream started), as `<tx>:<id>`. */
const POSITION = /^(\d{1,20}):(\d{1,15})$/;

/**
 * The text a client resumes from (SSE `id`, `Last-Event-ID`): the event id of a position that is one (always
 * on SQLite), else `<tx>:<id>` (a PostgreSQL stream that has sent no event yet starts between transactions).
 */
export function positionText(position: StreamPosition): string {
  return position.tx === null ? String(position.id) : `${position.tx}:${position.id}`;
}

/**
 * Where a stream of new events starts. `Last-Event-ID` (a reconnecting client: an event id or a position
 * text) wins over `since` (an event id, or a duration: the events received in that window); without
 * either, with the next event committed.
 */
export async function streamStart(reader: NewEventReader, lastEventId: string | undefined, since: string | undefined, now: number): Promise<StreamPosition> {
  if (lastEventId !== undefined && lastEventId.trim() !== '') {
    const given = lastEventId.trim();
    if (EVENT_ID.test(given)) return reader.streamPosition({ afterEventId: Number(given) });
    const position = POSITION.exec(given);
    if (position) return { tx: position[1]!, id: Number(position[2]) };
    throw new HookrelayError('bad_request', 'Last-Event-ID must be the id of an event message (or of the ready message).', {
      issues: [{ path: 'Last-Event-ID', message: 'not an event id', code: 'invalid_last_event_id' }],
    });
  }
  if (since === undefined) return reader.streamPosition({ now: true });
  if (EVENT_ID.test(since)) return reader.streamPosition({ afterEventId: Number(since) });
  return reader.streamPosition({ receivedFrom: now - parseDuration(since) });
}
