import { deliveryPauses } from '../../../delivery/delivery-pauses.js';
import type { OperationsContext } from '../../../operations/context.js';
import { eventWithDeliveries, listEventsPage } from '../../../operations/browse.js';
import type { JobRunner } from '../../../operations/jobs/job-runner.js';
import { replayEvent } from '../../../operations/replay-event.js';
import { resendEvent } from '../../../operations/resend-event.js';
import { BulkReplayBodySchema, EventsQuerySchema, NumericIdParamsSchema, ReplayEventBodySchema, ResendBodySchema } from '../request-schemas.js';
import { EventListSchema, EventWithDeliveriesSchema, JobSchema, ReplayResultSchema, ResendResultSchema } from '../../../operations/view-schemas.js';
import { defineRoute, type AdminRoute } from '../route-table.js';
import { deliveryView, jobView } from '../../../operations/views.js';

const NOT_FOUND = { status: 404, description: 'no such event (`not_found`)' };

export function eventRoutes(ctx: OperationsContext, jobs: JobRunner): AdminRoute[] {
  return [
    defineRoute({
      method: 'get',
      path: '/events',
      operationId: 'listEvents',
      summary: 'List stored events, newest first',
      description: 'Keyset-paginated: pass `nextCursor` back as `cursor`. Events arriving meanwhile never shift later pages. With a time range the order is by receipt time.',
      query: EventsQuerySchema,
      success: { status: 200, description: 'one page of events', schema: EventListSchema },
      async handle({ query }) {
        const { limit, cursor, ...filter } = query;
        return { status: 200, body: await listEventsPage(ctx.store, filter, { limit, cursor }) };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/events/replay',
      operationId: 'replayEvents',
      summary: 'Replay every event matching a filter (a job)',
      description: 'Events stored when the job starts are replayed through the current rules (or only `ruleId`), oldest first, 200 per transaction. Poll the job; cancel it with POST /jobs/{id}/cancel.',
      body: BulkReplayBodySchema,
      success: { status: 202, description: 'the job, running', schema: JobSchema },
      errors: [{ status: 404, description: 'unknown ruleId (`not_found`)' }, { status: 409, description: 'two jobs are already running (`conflict`)' }],
      async handle({ body }) {
        const job = await jobs.startReplay(body.filter, body.filter, body.ruleId ?? null);
        return { status: 202, body: jobView(job) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/events/:id',
      operationId: 'getEvent',
      summary: 'One event: headers, exact body, parsed JSON, and all its deliveries with every attempt',
      params: NumericIdParamsSchema,
      success: { status: 200, description: 'the event and its deliveries', schema: EventWithDeliveriesSchema },
      errors: [NOT_FOUND],
      async handle({ params }) {
        return { status: 200, body: await eventWithDeliveries(ctx.store, params.id, deliveryPauses(ctx.rules.current())) };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/events/:id/replay',
      operationId: 'replayEvent',
      summary: 'Replay one event through the current rules',
      description: 'Creates new deliveries (origin `replay`) for every rule that matches, or only `ruleId`; with `force` even when that rule does not match.',
      params: NumericIdParamsSchema,
      body: ReplayEventBodySchema,
      success: { status: 201, description: 'the deliveries created (none when no rule matches)', schema: ReplayResultSchema },
      errors: [{ status: 404, description: 'no such event or rule (`not_found`)' }, { status: 422, description: 'the event does not match `ruleId` (`rule_mismatch`, `details.reason`)' }],
      async handle({ params, body }) {
        const deliveries = await replayEvent(ctx, params.id, body);
        const pauses = deliveryPauses(ctx.rules.current());
        return { status: 201, body: { deliveries: deliveries.map((d) => deliveryView(d, pauses)) } };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/events/:id/resend',
      operationId: 'resendEvent',
      summary: 'Send the stored raw bytes, byte-exact, to a URL once',
      description: 'Signature headers: `original` (as received), `resign` (new signature with the given secret) or `none`. The URL passes the SSRF guard. Nothing is stored.',
      params: NumericIdParamsSchema,
      body: ResendBodySchema,
      success: { status: 200, description: 'what the destination answered', schema: ResendResultSchema },
      errors: [NOT_FOUND, { status: 400, description: 'the URL resolves to an address the SSRF guard refuses (`destination_refused`)' }],
      async handle({ params, body }) {
        return { status: 200, body: await resendEvent(ctx, params.id, body) };
      },
    }),
  ];
}
