import type { OperationsContext } from '../../../operations/context.js';
import { DestinationsSchema, OutagesSchema } from '../../../operations/view-schemas.js';
import { outageView } from '../../../operations/views.js';
import { OutagesQuerySchema } from '../request-schemas.js';
import { defineRoute, type AdminRoute } from '../route-table.js';

export function destinationRoutes(ctx: OperationsContext): AdminRoute[] {
  return [
    defineRoute({
      method: 'get',
      path: '/destinations',
      operationId: 'listDestinations',
      summary: "This node's concurrency limit, attempts in flight and circuit state per destination origin",
      description: 'Limits adapt per node, in memory: each node of a cluster answers for its own attempts. Empty when delivery is off.',
      success: { status: 200, description: 'destinations attempted recently, first seen first', schema: DestinationsSchema },
      async handle() {
        return { status: 200, body: (await ctx.destinations?.()) ?? { adaptive: true, destinations: [] } };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/outages',
      operationId: 'listOutages',
      summary: 'Outages of destinations, newest first: when each began and ended, and how many dead letters were redriven',
      description: 'Shared by every node (kept in the store). An outage opens when a circuit opens and closes at the next success at its destination.',
      query: OutagesQuerySchema,
      success: { status: 200, description: 'outages', schema: OutagesSchema },
      async handle({ query }) {
        return { status: 200, body: { items: (await ctx.store.listOutages({ open: query.open, limit: query.limit })).map(outageView) } };
      },
    }),
  ];
}
