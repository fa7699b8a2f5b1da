import { HookrelayError } from '../errors.js';
import type { OperationsContext } from './context.js';
import type { BlockedKeysView } from './view-schemas.js';

const iso = (ms: number): string => new Date(ms).toISOString();

/**
 * An ordered rule's blocked keys (GET /rules/{id}/blocked-keys, the console): keys whose head has failed and
 * is still pending, longest blocked first, each with its head and how many deliveries wait behind it.
 */
export async function blockedKeys(ctx: OperationsContext, ruleId: string, limit: number): Promise<BlockedKeysView> {
  const rule = ctx.rules.current().rules.find((r) => r.id === ruleId);
  if (!rule) throw new HookrelayError('not_found', `No rule "${ruleId}" in the current rule set.`, { ruleId });
  const { order } = rule;
  if (!order) return { ruleId, order: null, blockedKeys: [] }; // unordered: no key is ever blocked
  const now = ctx.now();
  const keys = await ctx.store.listBlockedKeys(ruleId, limit);
  return {
    ruleId,
    order: { ...order },
    blockedKeys: keys.map(({ key, head, waiting }) => ({
      key,
      overdue: order.maxBlockedForMs !== undefined && now - head.blockedSince >= order.maxBlockedForMs,
      waiting,
      head: {
        deliveryId: head.deliveryId,
        eventId: head.eventId,
        attempts: head.attempts,
        blockedSince: iso(head.blockedSince),
        nextAttemptAt: head.nextAttemptAt === null ? null : iso(head.nextAttemptAt),
        lastStatus: head.lastStatus,
        lastError: head.lastError,
      },
    })),
  };
}
