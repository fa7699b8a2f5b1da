import { Router, type Request } from 'express';
import { HookrelayError } from '../../errors.js';
import type { MockContext } from '../context.js';
import { buyerFormPage, EMPTY_BUYER_FORM, purchaseSuccessPage, type BuyerFormValues } from '../html/buyer-pages.js';
import { fieldErrorsFrom, formText } from '../html/form-fields.js';
import { buyerFormSchema } from '../schemas.js';
import { isUuid, issueDetails } from '../validation.js';

/** For buyers any unusable link is simply "not found", malformed or not. */
function checkoutIdFrom(req: Request): string {
  const id = req.params.id;
  if (!isUuid(id)) throw new HookrelayError('not_found', 'checkout not found');
  return id.toLowerCase();
}

function readBuyerForm(body: unknown): BuyerFormValues {
  return {
    email: formText(body, 'email'),
    walletAddress: formText(body, 'walletAddress'),
    quantity: formText(body, 'quantity'),
    paymentMethod: formText(body, 'paymentMethod'),
  };
}

/** The public buyer page (no auth): the form, the purchase, the success page. */
export function createBuyerRouter(ctx: MockContext): Router {
  const router = Router();

  router.get('/checkout/:id', (req, res) => {
    const checkout = ctx.purchases.requirePurchasable(checkoutIdFrom(req));
    res.type('html').send(buyerFormPage(checkout, EMPTY_BUYER_FORM));
  });

  router.post('/checkout/:id', async (req, res) => {
    const id = checkoutIdFrom(req);
    const checkout = ctx.purchases.requirePurchasable(id);
    const values = readBuyerForm(req.body);
    const parsed = buyerFormSchema.safeParse({
      email: values.email,
      walletAddress: values.walletAddress || undefined,
      quantity: values.quantity === '' ? undefined : Number(values.quantity),
      paymentMethod: values.paymentMethod || undefined,
    });
    if (!parsed.success) {
      const errors = fieldErrorsFrom(issueDetails(parsed.error));
      res.status(422).type('html').send(buyerFormPage(checkout, values, errors));
      return;
    }
    const { transfer } = await ctx.purchases.purchase(id, parsed.data, { signature: 'valid', duplicate: false });
    res.type('html').send(purchaseSuccessPage(checkout, transfer));
  });

  return router;
}
