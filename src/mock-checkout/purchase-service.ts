import { HookrelayError } from '../errors.js';
import type { BodyDrift, CheckoutRecord, DeliveryRecord, SignatureMode, TransferRecord } from './records.js';
import { purchaseSchema, type PurchaseInput } from './schemas.js';
import type { MockRepository } from './store/repository.js';
import { buildTransfer } from './transfer-builder.js';
import type { DeliverTransfer } from './webhook-dispatch.js';

export interface PurchaseResult {
  transfer: TransferRecord;
  deliveries: DeliveryRecord[];
}

export interface PurchaseOptions {
  signature: SignatureMode;
  duplicate: boolean;
  drift?: BodyDrift;
}

export type PurchaseService = ReturnType<typeof createPurchaseService>;

/** Completing purchases (buyer page, automation hook) and sending test webhooks (dashboard). */
export function createPurchaseService(deps: { repository: MockRepository; clock: () => Date; deliver: DeliverTransfer }) {
  const { repository, clock, deliver } = deps;

  /** The checkout a buyer may still pay for: 404 when missing, 410 when its one-time link was used. */
  function requirePurchasable(checkoutId: string): CheckoutRecord {
    const checkout = repository.getCheckout(checkoutId);
    if (!checkout) throw new HookrelayError('not_found', `checkout ${checkoutId} does not exist`);
    if (checkout.oneTimeLink && repository.transferStats(checkoutId).count > 0) {
      throw new HookrelayError('gone', 'this one-time checkout link has already been used');
    }
    return checkout;
  }

  return {
    requirePurchasable,

    async purchase(checkoutId: string, input: PurchaseInput, options: PurchaseOptions): Promise<PurchaseResult> {
      // Check and record in one transaction, so two racing buyers cannot both use a one-time link.
      const { checkout, transfer } = repository.transaction(() => {
        const purchasable = requirePurchasable(checkoutId);
        const { tokensSold } = repository.transferStats(checkoutId);
        const built = buildTransfer({ checkout: purchasable, input, tokensSold, clock });
        repository.insertTransfer(built);
        return { checkout: purchasable, transfer: built };
      });
      const deliveries = await deliver(checkout, transfer, { kind: 'purchase', ...options });
      return { transfer, deliveries };
    },

    /** A realistic signed delivery that records no transfer and leaves a one-time link unused. */
    async sendTestWebhook(checkoutId: string): Promise<PurchaseResult> {
      const checkout = repository.getCheckout(checkoutId);
      if (!checkout) throw new HookrelayError('not_found', `checkout ${checkoutId} does not exist`);
      const input = purchaseSchema.parse({ email: 'test-buyer@example.com' });
      const { tokensSold } = repository.transferStats(checkoutId);
      const transfer = buildTransfer({ checkout, input, tokensSold, clock });
      const deliveries = await deliver(checkout, transfer, { kind: 'test', signature: 'valid', duplicate: false });
      return { transfer, deliveries };
    },
  };
}
