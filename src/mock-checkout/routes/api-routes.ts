import { Router, type Request } from 'express';
import { HookrelayError } from '../../errors.js';
import { checkoutUrl, type MockContext } from '../context.js';
import { listQuerySchema } from '../schemas.js';
import { parseOrThrow, requireUuid } from '../validation.js';

/** A JSON body was required; express.json leaves `req.body` undefined when the content type is not JSON. */
export function jsonBody(req: Request): unknown {
  if (req.body === undefined) {
    throw new HookrelayError('unsupported_media_type', 'send the body as JSON with Content-Type: application/json');
  }
  return req.body;
}

/** The checkout API under /api/v1 (auth is applied by the caller). */
export function createApiRouter(ctx: MockContext): Router {
  const router = Router();

  router.post('/checkout', (req, res) => {
    const checkout = ctx.checkouts.create(jsonBody(req));
    res.status(200).json({ checkoutUrl: checkoutUrl(ctx, req, checkout.id), result: checkout });
  });

  router.get('/checkout', (req, res) => {
    const query = parseOrThrow(listQuerySchema, req.query, 'query', 'bad_request');
    res.json(ctx.checkouts.list(query));
  });

  router.get('/checkout/:id', (req, res) => {
    const checkout = ctx.checkouts.get(requireUuid(req.params.id));
    res.json({ checkoutUrl: checkoutUrl(ctx, req, checkout.id), result: checkout });
  });

  router.post('/checkout/:id', (req, res) => {
    const id = requireUuid(req.params.id);
    const checkout = ctx.checkouts.edit(id, jsonBody(req));
    res.json({ checkoutUrl: checkoutUrl(ctx, req, checkout.id), result: checkout });
  });

  router.delete('/checkout/:id', (req, res) => {
    res.json({ result: ctx.checkouts.delete(requireUuid(req.params.id)) });
  });

  return router;
}
