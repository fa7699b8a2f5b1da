import { parseDuration } from '../../../duration.js';
import { HookrelayError } from '../../../errors.js';
import { newestEventId } from '../../../operations/jobs/batches.js';
import type { Store } from '../../../store/store.js';

const EVENT_ID = /^\d{1,15}$/;

/**
 * Where a stream starts: after this event id. `Last-Event-ID` (a reconnecting client) wins over `since`
 * (an event id, or a duration: the events received in that window); without either, only new events.
 */
export async function streamStartAfter(store: Store, lastEventId: string | undefined, since: string | undefined, now: number): Promise<number> {
  if (lastEventId !== undefined && lastEventId.trim() !== '') {
    const given = lastEventId.trim();
    if (!EVENT_ID.test(given)) {
      throw new HookrelayError('bad_request', 'Last-Event-ID must be the id of an event message.', {
        issues: [{ path: 'Last-Event-ID', message: 'not an event id', code: 'invalid_last_event_id' }],
      });
    }
    return Number(given);
  }
  if (since === undefined) return newestEventId(store);
  if (EVENT_ID.test(since)) return Number(since);
  const first = await store.firstEventIdReceivedFrom(now - parseDuration(since));
  return first === null ? newestEventId(store) : first - 1;
}
