import { z } from 'zod';
import { BODY_DRIFTS } from './records.js';

const UPPER_SNAKE = /^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*$/;

/** "is required" for a missing field; zod's own message for anything else. */
const requiredField = { error: (issue: { input?: unknown }) => (issue.input === undefined ? 'is required' : undefined) };

export const hexAddress = z
  .string(requiredField)
  .regex(/^0x[0-9a-fA-F]{40}$/, { error: 'must be 0x followed by 40 hexadecimal digits' });

const upperSnake = z.string().max(64).regex(UPPER_SNAKE, { error: 'must be UPPER_SNAKE_CASE, e.g. ACME_NFT_DROP_V2' });
const currencyCode = z.string(requiredField).regex(/^[A-Z0-9]{2,12}$/, { error: 'must be an upper-case currency code, e.g. MATIC' });
const nonEmptyText = (max: number) => z.string(requiredField).trim().min(1, { error: 'must not be empty' }).max(max);
// z.httpUrl would demand a public domain name; loopback hosts must pass, so only the scheme is restricted.
const httpUrl = () => z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' });
const price = z.number({ error: (issue) => (issue.input === undefined ? 'is required' : 'must be a number') }).min(0, { error: 'must be 0 or more' });
const webhookSecret = z.string().min(8, { error: 'must be at least 8 characters' }).max(256);

/** The loopback names the mock delivers to unless remote webhook URLs are allowed. */
export function isLoopbackUrl(url: string): boolean {
  if (!URL.canParse(url)) return false;
  const host = new URL(url).hostname;
  return host === 'localhost' || host === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

function webhookUrl(allowRemoteWebhooks: boolean) {
  const url = httpUrl();
  if (allowRemoteWebhooks) return url;
  // zod still runs refinements after a format issue; an unparseable URL is reported once, by the URL check.
  return url.refine((value) => !URL.canParse(value) || isLoopbackUrl(value), {
    error: 'must point at localhost, 127.0.0.0/8 or [::1] (start the mock with remote webhooks allowed to send elsewhere)',
  });
}

/**
 * Create and edit bodies. Required on create: contractAddress, collectionTitle, priceValue, priceCurrency.
 * Unknown keys are ignored (stripped), as the real service may accept fields the spec does not show.
 */
export function checkoutSchemas(options: { allowRemoteWebhooks: boolean }) {
  const webhookUrls = z.array(webhookUrl(options.allowRemoteWebhooks)).max(10);
  const create = z.object({
    contractAddress: hexAddress,
    contractChain: nonEmptyText(64).optional(),
    collectionTitle: nonEmptyText(200),
    contractType: upperSnake.optional(),
    successCallbackUrl: httpUrl().optional(),
    priceValue: price,
    priceCurrency: currencyCode,
    webhookUrls: webhookUrls.optional(),
    oneTimeLink: z.boolean().optional(),
    webhookSecret: webhookSecret.optional(),
  });
  // Edit: every field optional; `null` clears an optional field.
  const edit = z.object({
    contractAddress: hexAddress.optional(),
    contractChain: nonEmptyText(64).nullable().optional(),
    collectionTitle: nonEmptyText(200).optional(),
    contractType: upperSnake.nullable().optional(),
    successCallbackUrl: httpUrl().nullable().optional(),
    priceValue: price.optional(),
    priceCurrency: currencyCode.optional(),
    webhookUrls: webhookUrls.optional(),
    oneTimeLink: z.boolean().optional(),
    webhookSecret: webhookSecret.optional(),
  });
  return { create, edit };
}

/** What a buyer (the form) or a test (the automation hook) sends to complete a purchase. */
export const purchaseSchema = z.object({
  email: z.email({ error: 'must be an e-mail address' }).max(254).default('buyer@example.com'),
  /** Absent: the mock makes an embedded wallet for the buyer. */
  walletAddress: hexAddress.optional(),
  // Check-level messages: a schema-level `error` would also replace the min/max messages in zod 4.
  quantity: z
    .int({ error: 'must be a whole number' })
    .min(1, { error: 'must be at least 1' })
    .max(100, { error: 'must be at most 100' })
    .default(1),
  paymentMethod: upperSnake.default('BUY_WITH_CARD'),
});

export type PurchaseInput = z.infer<typeof purchaseSchema>;

export const PAYMENT_METHODS = ['BUY_WITH_CARD', 'BUY_WITH_CRYPTO'] as const;

/** The buyer form: e-mail is required and the payment method is one the page offers. */
export const buyerFormSchema = purchaseSchema.extend({
  email: z.email({ error: 'enter your e-mail address' }).max(254),
  paymentMethod: z.enum(PAYMENT_METHODS, { error: 'choose a payment method' }),
});

/** Automation-only switches on top of a purchase. */
export const purchaseHookSchema = purchaseSchema.extend({
  signature: z.enum(['valid', 'invalid', 'empty']).default('valid'),
  duplicate: z.boolean().default(false),
  drift: z.enum(BODY_DRIFTS).default('none'),
});

export const listQuerySchema = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(20),
  cursor: z.string().min(1).optional(),
});

