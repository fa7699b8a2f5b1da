import { randomBytes, randomUUID } from 'node:crypto';

/** Timestamps in the service's format: ISO 8601 with milliseconds and an explicit +00:00 offset. */
export function serviceTimestamp(date: Date): string {
  return date.toISOString().replace('Z', '+00:00');
}

const hex = (bytes: number): string => `0x${randomBytes(bytes).toString('hex')}`;

export interface SampleTransferOptions {
  checkoutId?: string;
  email?: string;
  walletAddress?: string;
  quantity?: number;
  paymentMethod?: string;
  unitPriceUsd?: number;
  at?: Date;
}

/**
 * A realistic `transfer:succeeded` body in the exact shape and key order of the spec's table, with fresh
 * ids each call. Used by `send-test`, the tests and the benchmarks.
 */
export interface SampleTransferBody {
  event: 'transfer:succeeded';
  result: { id: string; [field: string]: unknown };
}

export function sampleTransferSucceeded(options: SampleTransferOptions = {}): SampleTransferBody {
  const quantity = options.quantity ?? 2;
  const created = options.at ?? new Date();
  const paid = new Date(created.getTime() + 2_150);
  const transferred = new Date(paid.getTime() + 9_420);
  const firstToken = 1000 + Math.floor(Math.random() * 9000);
  const tokenIds = Array.from({ length: quantity }, (_, i) => String(firstToken + i));
  const networkFeeUsd = 0.02;
  return {
    event: 'transfer:succeeded',
    result: {
      id: randomUUID(),
      checkoutId: options.checkoutId ?? randomUUID(),
      walletAddress: options.walletAddress ?? hex(20),
      walletType: 'EMBEDDED',
      email: options.email ?? 'buyer@example.com',
      quantity,
      paymentMethod: options.paymentMethod ?? 'BUY_WITH_CARD',
      networkFeeUsd,
      totalPriceUsd: Math.round(((options.unitPriceUsd ?? 24.5) * quantity + networkFeeUsd) * 100) / 100,
      createdAt: serviceTimestamp(created),
      paymentCompletedAt: serviceTimestamp(paid),
      transferCompletedAt: serviceTimestamp(transferred),
      claimedTokens: {
        tokenIds,
        transactionHashes: { [hex(32)]: tokenIds },
      },
    },
  };
}
