import { deliveryPauses } from '../../../delivery/delivery-pauses.js';
import type { OperationsContext } from '../../../operations/context.js';
import { getDeliveryDetail, listDeliveriesPage, retryDelivery } from '../../../operations/browse.js';
import type { JobRunner } from '../../../operations/jobs/job-runner.js';
import { BulkRetryBodySchema, DeadCountQuerySchema, DeliveriesQuerySchema, NumericIdParamsSchema } from '../request-schemas.js';
import { DeadCountSchema, DeliveryDetailSchema, DeliveryListSchema, DeliverySchema, JobSchema } from '../../../operations/view-schemas.js';
import { defineRoute, type AdminRoute } from '../route-table.js';
import { retryableFilter, retrySkips } from '../../../operations/retry-skips.js';
import { serverWaitSources } from '../../../operations/delivery-wait.js';
import { jobView } from '../../../operations/views.js';

export function deliveryRoutes(ctx: OperationsContext, jobs: JobRunner): AdminRoute[] {
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
        return { status: 200, body: await listDeliveriesPage(ctx.store, filter, { limit, cursor }, deliveryPauses(ctx.rules.current()), await serverWaitSources(ctx)) };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/deliveries/retry',
      operationId: 'retryDeliveries',
      summary: 'Retry every dead-lettered delivery matching a filter (a job)',
      description: "Dead-lettered deliveries only, oldest first, 200 per transaction; each becomes pending and due now. Those whose rule is no longer in the rule set are skipped and listed in the job's `summary.skipped`.",
      body: BulkRetryBodySchema,
      success: { status: 202, description: 'the job, running', schema: JobSchema },
      errors: [{ status: 409, description: 'two jobs are already running (`conflict`)' }],
      async handle({ body }) {
        const job = await jobs.startRetry(body.filter, body.filter);
        return { status: 202, body: jobView(job) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/deliveries/dead-count',
      operationId: 'countDeadDeliveries',
      summary: 'How many dead-lettered deliveries a bulk retry with this rule filter would retry, and which it would skip',
      query: DeadCountQuerySchema,
      success: { status: 200, description: 'the count', schema: DeadCountSchema },
      async handle({ query }) {
        const rules = ctx.rules.current();
        const count = await ctx.store.countDeadDeliveries(retryableFilter(query, rules));
        return { status: 200, body: { count, skipped: await retrySkips(ctx.store, query, rules) } };
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
        return { status: 200, body: await getDeliveryDetail(ctx.store, params.id, deliveryPauses(ctx.rules.current()), await serverWaitSources(ctx)) };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/deliveries/:id/retry',
      operationId: 'retryDelivery',
      summary: 'Make a delivered or dead delivery pending and due now',
      params: NumericIdParamsSchema,
      success: { status: 200, description: 'the delivery, pending', schema: DeliverySchema },
      errors: [
        { status: 404, description: 'no such delivery (`not_found`)' },
        { status: 409, description: 'already pending (`conflict`), or its rule is no longer in the rule set (`rule_removed`)' },
      ],
      async handle({ params }) {
        return { status: 200, body: await retryDelivery(ctx, params.id, deliveryPauses(ctx.rules.current())) };
      },
    }),
  ];
}
