import type { OperationsContext } from '../../../operations/context.js';
import { blockedKeys } from '../../../operations/blocked-keys.js';
import { BlockedKeysQuerySchema, DryRunBodySchema, RuleIdParamsSchema } from '../request-schemas.js';
import { BlockedKeysSchema, DryRunResultSchema, RulesSchema } from '../../../operations/view-schemas.js';
import { defineRoute, type AdminRoute } from '../route-table.js';
import { dryRunRule } from '../../../operations/rule-dry-run.js';
import { rulesStatus } from '../rules-status.js';

export function ruleRoutes(ctx: OperationsContext): AdminRoute[] {
  return [
    defineRoute({
      method: 'get',
      path: '/rules',
      operationId: 'listRules',
      summary: 'The rules in use, their load state, and delivery counts per rule',
      success: { status: 200, description: 'the rule set', schema: RulesSchema },
      async handle() {
        return { status: 200, body: await rulesStatus(ctx) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/rules/:id/blocked-keys',
      operationId: 'listBlockedKeys',
      summary: "An ordered rule's blocked keys: each key whose head has failed and is still pending, with its head and how many wait behind it",
      params: RuleIdParamsSchema,
      query: BlockedKeysQuerySchema,
      success: { status: 200, description: 'longest blocked first', schema: BlockedKeysSchema },
      errors: [{ status: 404, description: 'no such rule in the current rule set (`not_found`)' }],
      async handle({ params, query }) {
        return { status: 200, body: await blockedKeys(ctx, params.id, query.limit) };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/rules/:id/dry-run',
      operationId: 'dryRunRule',
      summary: 'What one rule would do with a stored event, or with the newest N; nothing is sent',
      params: RuleIdParamsSchema,
      body: DryRunBodySchema,
      success: { status: 200, description: 'one result per event', schema: DryRunResultSchema },
      errors: [{ status: 404, description: 'no such rule or event (`not_found`)' }],
      async handle({ params, body }) {
        return { status: 200, body: await dryRunRule(ctx.store, ctx.rules.current(), params.id, body) };
      },
    }),
  ];
}
