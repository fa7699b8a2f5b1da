import { randomBytes, randomUUID } from 'node:crypto';
import type { CheckoutRecord, TransferRecord } from './records.js';
import type { PurchaseInput } from './schemas.js';
import { formatTimestamp } from './timestamps.js';

/** Illustrative fixed USD rates so totals look plausible; unknown currencies count as 1 USD. */
const USD_PER_UNIT: Readonly<Record<string, number>> = {
  USD: 1,
  USDC: 1,
  USDT: 1,
  EUR: 1.08,
  MATIC: 0.5,
  POL: 0.5,
  ETH: 3000,
  WETH: 3000,
  SOL: 150,
};

/** Flat network fee of every mock transfer, in USD. */
export const NETWORK_FEE_USD = 0.02;

export interface TransferContext {
  checkout: CheckoutRecord;
  input: PurchaseInput;
  /** Tokens this checkout sold before, so token ids keep counting up. */
  tokensSold: number;
  /** Must never go backwards: the three timestamps are read from it in order. */
  clock: () => Date;
}

/** A completed transfer as the spec's webhook `result` describes it, with realistic ids and hashes. */
export function buildTransfer({ checkout, input, tokensSold, clock }: TransferContext): TransferRecord {
  const createdAt = formatTimestamp(clock());
  const paymentCompletedAt = formatTimestamp(clock());
  const tokenIds = Array.from({ length: input.quantity }, (_, i) => String(tokensSold + i + 1));
  const transactionHash = `0x${randomBytes(32).toString('hex')}`;
  return {
    id: randomUUID(),
    checkoutId: checkout.id,
    walletAddress: input.walletAddress ?? randomWalletAddress(),
    walletType: input.walletAddress ? 'EXTERNAL' : 'EMBEDDED',
    email: input.email,
    quantity: input.quantity,
    paymentMethod: input.paymentMethod,
    networkFeeUsd: NETWORK_FEE_USD,
    totalPriceUsd: totalPriceUsd(checkout, input.quantity),
    createdAt,
    paymentCompletedAt,
    transferCompletedAt: formatTimestamp(clock()),
    claimedTokens: { tokenIds, transactionHashes: { [transactionHash]: tokenIds } },
  };
}

export function totalPriceUsd(checkout: Pick<CheckoutRecord, 'priceValue' | 'priceCurrency'>, quantity: number): number {
  const rate = USD_PER_UNIT[checkout.priceCurrency] ?? 1;
  return roundCents(checkout.priceValue * quantity * rate + NETWORK_FEE_USD);
}

function roundCents(value: number): number {
  return Math.round(value * 100) / 100;
}

function randomWalletAddress(): string {
  return `0x${randomBytes(20).toString('hex')}`;
}
