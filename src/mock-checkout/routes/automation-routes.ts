import { Router } from 'express';
import type { MockContext } from '../context.js';
import { purchaseHookSchema } from '../schemas.js';
import { parseOrThrow, requireUuid } from '../validation.js';

/** Hooks for automated tests under /mock (same bearer auth as the API): buy without a browser, read deliveries. */
export function createAutomationRouter(ctx: MockContext): Router {
  const router = Router();

  router.post('/checkout/:id/purchase', async (req, res) => {
    const id = requireUuid(req.params.id);
    // An empty body (or none) means "all defaults".
    const { signature, duplicate, drift, ...input } = parseOrThrow(purchaseHookSchema, req.body ?? {}, 'purchase');
    const { transfer, deliveries } = await ctx.purchases.purchase(id, input, { signature, duplicate, drift });
    res.json({ transfer, deliveries });
  });

  router.get('/checkout/:id/deliveries', (req, res) => {
    const checkout = ctx.checkouts.get(requireUuid(req.params.id));
    res.json({ result: ctx.repository.listDeliveries(checkout.id) });
  });

  router.get('/checkout/:id/transfers', (req, res) => {
    const checkout = ctx.checkouts.get(requireUuid(req.params.id));
    res.json({ result: ctx.repository.listTransfers(checkout.id) });
  });

  return router;
}
