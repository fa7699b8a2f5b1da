import { HookrelayError } from '../../../errors.js';
import type { AdminContext } from '../../../operations/context.js';
import { decodeDeliveryCursor, encodeDeliveryCursor } from '../../../operations/cursor.js';
import { toDeadDeliveryFilter } from '../filters.js';
import type { JobRunner } from '../../../operations/jobs/job-runner.js';
import { BulkRetryBodySchema, DeliveriesQuerySchema, NumericIdParamsSchema } from '../request-schemas.js';
import { DeliveryDetailSchema, DeliveryListSchema, DeliverySchema, JobSchema } from '../../../operations/view-schemas.js';
import { defineRoute, type AdminRoute } from '../route-table.js';
import { deliveryDetailView, deliveryView, jobView } from '../../../operations/views.js';

export function deliveryRoutes(ctx: AdminContext, jobs: JobRunner): AdminRoute[] {
  return [
    defineRoute({
      method: 'get',
      path: '/deliveries',
      operationId: 'listDeliveries',
      summary: 'List deliveries, newest first',
      query: DeliveriesQuerySchema,
      success: { status: 200, description: 'one page of deliveries', schema: DeliveryListSchema },
      async handle({ query }) {
        const { limit, cursor, ...filter } = query;
        const page = await ctx.store.listDeliveries(filter, { limit, ...(cursor !== undefined && { before: decodeDeliveryCursor(cursor) }) });
        return { status: 200, body: { items: page.items.map(deliveryView), nextCursor: page.nextCursor === null ? null : encodeDeliveryCursor(page.nextCursor) } };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/deliveries/retry',
      operationId: 'retryDeliveries',
      summary: 'Retry every dead-lettered delivery matching a filter (a job)',
      description: 'Dead-lettered deliveries only, oldest first, 200 per transaction; each becomes pending and due now.',
      body: BulkRetryBodySchema,
      success: { status: 202, description: 'the job, running', schema: JobSchema },
      errors: [{ status: 409, description: 'two jobs are already running (`conflict`)' }],
      async handle({ body }) {
        const job = await jobs.startRetry(body.filter, toDeadDeliveryFilter(body.filter));
        return { status: 202, body: jobView(job) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/deliveries/:id',
      operationId: 'getDelivery',
      summary: 'One delivery with every attempt',
      params: NumericIdParamsSchema,
      success: { status: 200, description: 'the delivery', schema: DeliveryDetailSchema },
      errors: [{ status: 404, description: 'no such delivery (`not_found`)' }],
      async handle({ params }) {
        const delivery = await ctx.store.getDelivery(params.id);
        if (!delivery) throw new HookrelayError('not_found', `No delivery ${params.id}.`);
        return { status: 200, body: deliveryDetailView(delivery) };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/deliveries/:id/retry',
      operationId: 'retryDelivery',
      summary: 'Make a delivered or dead delivery pending and due now',
      params: NumericIdParamsSchema,
      success: { status: 200, description: 'the delivery, pending', schema: DeliverySchema },
      errors: [{ status: 404, description: 'no such delivery (`not_found`)' }, { status: 409, description: 'already pending (`conflict`)' }],
      async handle({ params }) {
        if (!(await ctx.store.retryDelivery(params.id, ctx.now()))) {
          const existing = await ctx.store.getDelivery(params.id);
          if (!existing) throw new HookrelayError('not_found', `No delivery ${params.id}.`);
          throw new HookrelayError('conflict', `Delivery ${params.id} is already pending.`, { state: existing.state });
        }
        ctx.wakeWorker();
        const { attemptLog: _attempts, ...delivery } = (await ctx.store.getDelivery(params.id))!;
        return { status: 200, body: deliveryView(delivery) };
      },
    }),
  ];
}
