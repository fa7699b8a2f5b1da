import type { OperationsContext } from '../../../operations/context.js';
import { EventStreamQuerySchema } from '../request-schemas.js';
import { StreamedEventSchema } from '../../../operations/view-schemas.js';
import { defineRoute, type AdminRoute } from '../route-table.js';
import type { StreamHub } from '../stream/stream-hub.js';
import { streamStart } from '../../../operations/stream-position.js';

export function streamRoutes(ctx: OperationsContext, hub: StreamHub): AdminRoute[] {
  return [
    defineRoute({
      method: 'get',
      path: '/events/stream',
      operationId: 'streamEvents',
      summary: 'Follow newly stored events as Server-Sent Events',
      description:
        'One `event` message per newly stored event (imports too, marked `imported`; repeats of a stored event are not sent), its `id` the event id, its `data` a StreamedEvent. ' +
        'Takes the filters of GET /events. Resume with `Last-Event-ID` (or `since`): no gap, no duplicate. Comment lines are heartbeats. ' +
        'A final `end` message (`code`: `stream_overflow` for a client that did not keep up, `shutting_down`, `internal_error`) carries `lastEventId` to resume from.',
      query: EventStreamQuerySchema,
      success: { status: 200, contentType: 'text/event-stream', description: 'the stream; each `event` message\'s data', schema: StreamedEventSchema },
      errors: [{ status: 503, description: 'too many streams are open (`too_many_streams`) or the server is stopping (`shutting_down`)' }],
      async handle({ query, req }) {
        const { since, body, ...filter } = query;
        hub.checkRoom();
        const lastEventId = req.headers['last-event-id'];
        const start = await streamStart(ctx.store, typeof lastEventId === 'string' ? lastEventId : undefined, since, ctx.now());
        return { stream: (res) => void hub.open(res, { store: ctx.store, filter, includeBody: body, start }) };
      },
    }),
  ];
}
