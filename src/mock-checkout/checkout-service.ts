import { randomBytes, randomUUID } from 'node:crypto';
import { HookrelayError } from '../errors.js';
import { decodeCursor, encodeCursor } from './cursor.js';
import type { CheckoutRecord } from './records.js';
import { checkoutSchemas } from './schemas.js';
import type { MockRepository } from './store/repository.js';
import { formatTimestamp } from './timestamps.js';
import { parseOrThrow } from './validation.js';

export interface CheckoutServiceOptions {
  repository: MockRepository;
  /** Secret for checkouts created without one; absent: each checkout gets its own random secret. */
  defaultWebhookSecret?: string;
  allowRemoteWebhooks: boolean;
  now: () => Date;
}

export interface CheckoutList {
  result: CheckoutRecord[];
  nextCursor: string | null;
}

export type CheckoutService = ReturnType<typeof createCheckoutService>;

/** Create, read, edit, list and delete checkouts; validation lives here so the API and dashboard agree. */
export function createCheckoutService(options: CheckoutServiceOptions) {
  const { repository, now } = options;
  const schemas = checkoutSchemas({ allowRemoteWebhooks: options.allowRemoteWebhooks });

  function get(id: string): CheckoutRecord {
    const checkout = repository.getCheckout(id);
    if (!checkout) throw new HookrelayError('not_found', `checkout ${id} does not exist`);
    return checkout;
  }

  return {
    get,

    create(body: unknown): CheckoutRecord {
      const input = parseOrThrow(schemas.create, body, 'checkout');
      const timestamp = formatTimestamp(now());
      const checkout: CheckoutRecord = {
        id: randomUUID(),
        createdAt: timestamp,
        updatedAt: timestamp,
        contractAddress: input.contractAddress,
        contractChain: input.contractChain ?? null,
        collectionTitle: input.collectionTitle,
        contractType: input.contractType ?? null,
        successCallbackUrl: input.successCallbackUrl ?? null,
        priceValue: input.priceValue,
        priceCurrency: input.priceCurrency,
        webhookUrls: input.webhookUrls ?? [],
        oneTimeLink: input.oneTimeLink ?? false,
        webhookSecret: input.webhookSecret ?? options.defaultWebhookSecret ?? generateWebhookSecret(),
      };
      repository.insertCheckout(checkout);
      return checkout;
    },

    edit(id: string, body: unknown): CheckoutRecord {
      const changes = parseOrThrow(schemas.edit, body, 'checkout');
      return repository.transaction(() => {
        const current = get(id);
        const defined = Object.fromEntries(Object.entries(changes).filter(([, value]) => value !== undefined));
        const updated: CheckoutRecord = { ...current, ...defined, updatedAt: formatTimestamp(now()) };
        repository.replaceCheckout(updated);
        return updated;
      });
    },

    list(query: { limit: number; cursor?: string | undefined }): CheckoutList {
      const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor);
      const page = repository.listCheckouts(query.limit, after);
      return { result: page.items, nextCursor: page.nextAfter === null ? null : encodeCursor(page.nextAfter) };
    },

    delete(id: string): { id: string; deleted: true } {
      if (!repository.deleteCheckout(id)) throw new HookrelayError('not_found', `checkout ${id} does not exist`);
      return { id, deleted: true };
    },
  };
}

function generateWebhookSecret(): string {
  return `whsec_${randomBytes(24).toString('base64url')}`;
}
