import type { Request } from 'express';
import type { CheckoutService } from './checkout-service.js';
import type { SessionStore } from './http/dashboard-session.js';
import type { PurchaseService } from './purchase-service.js';
import type { MockRepository } from './store/repository.js';

/** What the routers share: the services, the store, and how to build absolute links. */
export interface MockContext {
  apiKey: string;
  repository: MockRepository;
  checkouts: CheckoutService;
  purchases: PurchaseService;
  sessions: SessionStore;
  /** Base URL for links handed out (checkoutUrl), without a trailing slash. */
  publicUrl(req: Request): string;
}

export function checkoutUrl(ctx: MockContext, req: Request, id: string): string {
  return `${ctx.publicUrl(req)}/checkout/${id}`;
}
