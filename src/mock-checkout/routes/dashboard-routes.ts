import { Router, type Request, type Response } from 'express';
import { HookrelayError } from '../../errors.js';
import { checkoutUrl, type MockContext } from '../context.js';
import { checkoutInputFromForm, formValuesOf, NEW_CHECKOUT_FORM, readCheckoutForm, type CheckoutFormValues } from '../html/checkout-form.js';
import { checkoutDetailPage, checkoutListPage, newCheckoutPage } from '../html/dashboard-pages.js';
import { fieldErrorsFrom, formText, type FieldErrors } from '../html/form-fields.js';
import { loginPage } from '../html/login-page.js';
import { keysMatch } from '../http/bearer-auth.js';
import type { IssueDetail } from '../validation.js';
import { requireUuid } from '../validation.js';

const PAGE_SIZE = 20;

function queryText(req: Request, name: string): string | undefined {
  const value = req.query[name];
  return typeof value === 'string' ? value : undefined;
}

/** Validation failures become form errors; anything else propagates to the error handler. */
function formErrorsOf(err: unknown): FieldErrors {
  if (err instanceof HookrelayError && err.code === 'validation_failed') {
    return fieldErrorsFrom((err.details as { issues: IssueDetail[] }).issues);
  }
  throw err;
}

/** The dashboard under /dashboard: log in with the API key, then list, create, edit, delete, test. */
export function createDashboardRouter(ctx: MockContext): Router {
  const router = Router();

  router.get('/login', (_req, res) => {
    res.type('html').send(loginPage());
  });

  router.post('/login', (req, res) => {
    if (!keysMatch(formText(req.body, 'apiKey'), ctx.apiKey)) {
      res.status(401).type('html').send(loginPage('That is not the API key of this mock.'));
      return;
    }
    ctx.sessions.start(req, res);
    res.redirect(303, '/dashboard');
  });

  router.post('/logout', (req, res) => {
    ctx.sessions.end(req, res);
    res.redirect(303, '/dashboard/login');
  });

  router.use(ctx.sessions.require());

  router.get('/', (req, res) => {
    const page = ctx.checkouts.list({ limit: PAGE_SIZE, cursor: queryText(req, 'cursor') });
    res.type('html').send(checkoutListPage(page.result, page.nextCursor, queryText(req, 'notice')));
  });

  router.get('/checkouts/new', (_req, res) => {
    res.type('html').send(newCheckoutPage(NEW_CHECKOUT_FORM));
  });

  router.post('/checkouts', (req, res) => {
    const values = readCheckoutForm(req.body);
    try {
      const checkout = ctx.checkouts.create(checkoutInputFromForm(values, 'create'));
      res.redirect(303, `/dashboard/checkouts/${checkout.id}?notice=created`);
    } catch (err) {
      res.status(422).type('html').send(newCheckoutPage(values, formErrorsOf(err)));
    }
  });

  const renderDetail = (req: Request, res: Response, id: string, form?: { values: CheckoutFormValues; errors: FieldErrors }) => {
    const checkout = ctx.checkouts.get(id);
    const page = checkoutDetailPage({
      checkout,
      buyerUrl: checkoutUrl(ctx, req, id),
      transferCount: ctx.repository.transferStats(id).count,
      deliveries: ctx.repository.listDeliveries(id),
      values: form?.values ?? formValuesOf(checkout),
      errors: form?.errors ?? {},
      notice: queryText(req, 'notice'),
    });
    res.type('html').send(page);
  };

  router.get('/checkouts/:id', (req, res) => {
    renderDetail(req, res, requireUuid(req.params.id));
  });

  router.post('/checkouts/:id', (req, res) => {
    const id = requireUuid(req.params.id);
    const values = readCheckoutForm(req.body);
    try {
      ctx.checkouts.edit(id, checkoutInputFromForm(values, 'edit'));
      res.redirect(303, `/dashboard/checkouts/${id}?notice=saved`);
    } catch (err) {
      const errors = formErrorsOf(err);
      res.status(422);
      renderDetail(req, res, id, { values, errors });
    }
  });

  router.post('/checkouts/:id/test-webhook', async (req, res) => {
    const id = requireUuid(req.params.id);
    const { deliveries } = await ctx.purchases.sendTestWebhook(id);
    res.redirect(303, `/dashboard/checkouts/${id}?notice=${deliveries.length > 0 ? 'test-sent' : 'no-webhooks'}`);
  });

  router.post('/checkouts/:id/delete', (req, res) => {
    ctx.checkouts.delete(requireUuid(req.params.id));
    res.redirect(303, '/dashboard?notice=deleted');
  });

  return router;
}
