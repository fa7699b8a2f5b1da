import { deliveryPauses } from '../../../delivery/delivery-pauses.js';
import type { OperationsContext } from '../../../operations/context.js';
import { eventWithDeliveries, listEventsPage } from '../../../operations/browse.js';
import { serverWaitSources } from '../../../operations/delivery-wait.js';
import { editTargetOf, replayEdited } from '../../../operations/edited-replay.js';
import type { JobRunner } from '../../../operations/jobs/job-runner.js';
import { resendEvent } from '../../../operations/resend-event.js';
import { replayWithRouting } from '../../../operations/routed-replay.js';
import { BulkReplayBodySchema, ReleaseBodySchema, EditedReplayBodySchema, EventsQuerySchema, NumericIdParamsSchema, ReplayEventBodySchema, ResendBodySchema } from '../request-schemas.js';
import { releaseQuarantined } from '../../../operations/release-event.js';
import { EditedReplayResultSchema, ReleaseResultSchema, EventListSchema, EventWithDeliveriesSchema, JobSchema, ReplayResultSchema, ResendResultSchema } from '../../../operations/view-schemas.js';
import { defineRoute, type AdminRoute } from '../route-table.js';
import { editedReplayView, eventDetailView, jobView, replayResultView } from '../../../operations/views.js';

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
      description: 'Events stored when the job starts are replayed, oldest first, 200 per transaction, through `route` `current` (default: today\'s rules) or `original` (each event\'s own rule set; events stored before rule sets were kept are counted in `summary.unknownRouting` and not replayed), all rules or only `ruleId`. `dryRun` creates nothing: the job\'s `summary` counts what would be sent per rule, with a sample. Poll the job; cancel it with POST /jobs/{id}/cancel.',
      body: BulkReplayBodySchema,
      success: { status: 202, description: 'the job, running', schema: JobSchema },
      errors: [{ status: 404, description: 'unknown ruleId (`not_found`)' }, { status: 409, description: 'two jobs are already running (`conflict`)' }],
      async handle({ body }) {
        const job = await jobs.startReplay(body.filter, body.filter, body.ruleId ?? null, { route: body.route, dryRun: body.dryRun });
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
        return { status: 200, body: await eventWithDeliveries(ctx.store, params.id, deliveryPauses(ctx.rules.current()), await serverWaitSources(ctx)) };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/events/:id/replay',
      operationId: 'replayEvent',
      summary: "Replay one event through today's rules or the rules that routed it",
      description: 'Creates new deliveries (origin `replay`) for every rule that matches, or only `ruleId`; with `force` even when that rule does not match. `route`: `current` (default, today\'s rules) or `original` (the rule set the event was routed with; rules removed or disabled since are listed in `withheld`, not sent). Each delivery is sent, and retried, with the rule version it names (`ruleSetHash`). `dryRun` answers the same plan and creates nothing.',
      params: NumericIdParamsSchema,
      body: ReplayEventBodySchema,
      success: { status: 201, description: 'the deliveries created (none when no rule matches)', schema: ReplayResultSchema },
      errors: [
        { status: 404, description: 'no such event or rule (`not_found`)' },
        { status: 409, description: 'route original for an event stored before rule sets were kept (`original_routing_unknown`): replay it with route current' },
        { status: 422, description: 'the event does not match `ruleId` (`rule_mismatch`, `details.reason`)' },
      ],
      async handle({ params, body }) {
        const answer = await replayWithRouting(ctx, params.id, body);
        return { status: answer.dryRun ? 200 : 201, body: replayResultView(answer, deliveryPauses(ctx.rules.current())) };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/events/:id/release',
      operationId: 'releaseEvent',
      summary: 'Release an event held in quarantine: route it once',
      description: "Routes the held event like a new event: today's rules are evaluated now and its deliveries (origin `ingest`) are written with the release, in one transaction; a delivery of an ordered rule joins the back of its key. Allowed when the event schema and the event's pinned contract now accept the body, or with `force` (an operator's decision). Who and when are recorded in `release`. List held events with GET /events?quarantine=held.",
      params: NumericIdParamsSchema,
      body: ReleaseBodySchema,
      success: { status: 200, description: 'the released event and the deliveries its release created', schema: ReleaseResultSchema },
      errors: [
        NOT_FOUND,
        { status: 409, description: 'released before (`already_released`, `details` says when and by whom: it is not routed again), or never held (`not_quarantined`), or its transfer was stored since from a corrected body (`transfer_stored_since`, `details.eventId`; send force: true to route it anyway)' },
        { status: 422, description: 'the body still fails the event schema or its pinned contract (`release_refused`, `details.issues`); send force: true to release anyway' },
      ],
      async handle({ params, body }) {
        const answer = await releaseQuarantined(ctx, params.id, { force: body.force, by: body.by ?? 'api' });
        return { status: 200, body: { event: eventDetailView(answer.event), deliveryIds: answer.deliveryIds } };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/events/:id/edited-replay',
      operationId: 'replayEditedEvent',
      summary: 'Store an edited copy of an event and send it',
      description: "The edited body is checked like a webhook (JSON, then the event schema; a failing body is refused unless `meantInvalid`, then stored with validation `invalid`) and stored as a new event linked to its original (`edit`), which is never changed. It keeps the original's transfer id: its idempotency key carries an edit number, so a real repeat of the original is still a duplicate. It is then sent through today's rules, through `ruleId` (even if its filter does not match: `appliedWithoutMatch` says why), or to `to` (one delivery, unsigned, through the network guard). Deliveries are signed by the rule's own signing, never with the original sender's signature.",
      params: NumericIdParamsSchema,
      body: EditedReplayBodySchema,
      success: { status: 201, description: 'the edited copy, what changed, and the deliveries created', schema: EditedReplayResultSchema },
      errors: [
        { status: 400, description: 'the edited body is not JSON (`invalid_json`)' },
        { status: 404, description: 'no such event or rule (`not_found`)' },
        { status: 409, description: 'the rule is disabled (`conflict`)' },
        { status: 422, description: 'the edited body fails the event schema (`invalid_payload`, `details.issues`); send meantInvalid to store it anyway' },
      ],
      async handle({ params, body }) {
        const { body: text, meantInvalid, dryRun, via } = body;
        const answer = await replayEdited(ctx, params.id, { body: Buffer.from(text, 'utf8'), meantInvalid, dryRun, target: editTargetOf(body), via: via ?? 'api' });
        return { status: answer.dryRun ? 200 : 201, body: editedReplayView(answer, deliveryPauses(ctx.rules.current())) };
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
