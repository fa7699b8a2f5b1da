import type { OperationsContext } from '../../operations/context.js';
import type { RulesView } from '../../operations/view-schemas.js';

/** GET /rules: the rule set in use, why the files on disk are not (if so), and each rule's delivery counts. */
export async function rulesStatus(ctx: OperationsContext): Promise<RulesView> {
  const status = ctx.rules.status();
  const ruleSet = ctx.rules.current();
  const counts = await ctx.store.deliveryCountsByRule(ruleSet.rules.map((rule) => rule.id));
  return {
    hash: status.hash,
    loadedAt: status.loadedAt.toISOString(),
    lastError: status.lastError ? { at: status.lastError.at.toISOString(), errors: [...status.lastError.errors] } : null,
    warnings: [...status.warnings],
    rules: ruleSet.rules.map((rule) => {
      const d = rule.describe();
      return {
        ...d,
        on: [...d.on],
        retryScheduleMs: [...d.retryScheduleMs],
        retryOn: [...d.retryOn],
        counts: counts.get(rule.id) ?? { pending: 0, delivered: 0, dead: 0 },
      };
    }),
  };
}
