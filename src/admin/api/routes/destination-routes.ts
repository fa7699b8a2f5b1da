import type { OperationsContext } from '../../../operations/context.js';
import { DestinationsSchema } from '../../../operations/view-schemas.js';
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
        return { status: 200, body: ctx.destinations?.() ?? { adaptive: true, destinations: [] } };
      },
    }),
  ];
}
