import { destinationCheck } from '../../../delivery/destination-check.js';
import { explainStoredEvent } from '../../../operations/explain-event.js';
import type { OperationsContext } from '../../../operations/context.js';
import { EventExplanationSchema, ExplainQuerySchema, type EventExplanationView } from '../explain-schemas.js';
import { NumericIdParamsSchema } from '../request-schemas.js';
import { defineRoute, type AdminRoute } from '../route-table.js';

export function explainRoutes(ctx: OperationsContext): AdminRoute[] {
  return [
    defineRoute({
      method: 'get',
      path: '/events/:id/explain',
      operationId: 'explainEvent',
      summary: 'Why each rule takes this event or not, clause by clause, and what a matching rule would send',
      description:
        'Every rule of the rule set loaded now (enabled or not, or only `ruleId`): `on`, `source` and every `where` clause with the value found and its verdict, nested operators as a tree. A matching rule shows the body after its transform, the headers and the signature, and the network guard\'s decision on its destination; nothing is sent. Secrets are masked. `ruleSetNote` says when the stored deliveries were planned under another rule set.',
      params: NumericIdParamsSchema,
      query: ExplainQuerySchema,
      success: { status: 200, description: 'the explanation', schema: EventExplanationSchema },
      errors: [{ status: 404, description: 'no such event or rule (`not_found`)' }],
      async handle({ params, query }) {
        const parts = { ruleSet: ctx.rules.current(), checkDestination: destinationCheck(ctx.guard, { resolveNames: true }), now: ctx.now };
        const body: EventExplanationView = await explainStoredEvent(ctx.store, parts, params.id, query);
        return { status: 200, body };
      },
    }),
  ];
}
