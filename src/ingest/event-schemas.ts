import { z } from 'zod';

/** Field formats from the checkout service spec; lenient on length, strict on shape. */
const hex0x = z.string().regex(/^0x[0-9a-fA-F]+$/, 'expected 0x-prefixed hexadecimal');
const uuid = z.uuid();
const timestampWithOffset = z.iso.datetime({ offset: true });
const upperSnake = z.string().regex(/^[A-Z][A-Z0-9_]*$/, 'expected an upper-case identifier with underscores');

/** The claimed tokens as the spec shows them: ids plus a map from transaction hash to the ids it carried. */
const claimedTokensByHash = z.looseObject({
  tokenIds: z.array(z.string()),
  transactionHashes: z.record(hex0x, z.array(z.string())),
});

/** The newer list shape: one entry per token with the transaction that delivered it. */
const claimedTokensList = z.looseObject({
  tokens: z.array(z.looseObject({ tokenId: z.string(), transactionHash: hex0x })),
});

export const TransferSucceededSchema = z.looseObject({
  event: z.literal('transfer:succeeded'),
  result: z.looseObject({
    id: uuid,
    checkoutId: uuid,
    walletAddress: hex0x,
    walletType: z.string().min(1),
    email: z.email(),
    quantity: z.number().int().positive(),
    paymentMethod: upperSnake,
    networkFeeUsd: z.number().nonnegative(),
    totalPriceUsd: z.number().nonnegative(),
    createdAt: timestampWithOffset,
    paymentCompletedAt: timestampWithOffset,
    transferCompletedAt: timestampWithOffset,
    claimedTokens: z.union([claimedTokensByHash, claimedTokensList]),
  }),
});
export type TransferSucceeded = z.infer<typeof TransferSucceededSchema>;

/**
 * Any event the service may send: the spec lists only transfer:succeeded, so other names with this
 * envelope are stored and routable, marked unrecognised.
 */
export const EventEnvelopeSchema = z.looseObject({
  event: z.string().min(1).max(200),
  result: z.looseObject({ id: z.string().min(1).max(200) }),
});
export type EventEnvelope = z.infer<typeof EventEnvelopeSchema>;

/** Event name → full schema. Names not listed here are stored with validation "unrecognised". */
export const KNOWN_EVENT_SCHEMAS: Readonly<Record<string, z.ZodType>> = {
  'transfer:succeeded': TransferSucceededSchema,
};
