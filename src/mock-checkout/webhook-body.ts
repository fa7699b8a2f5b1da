import type { BodyDrift, TransferRecord } from './records.js';

export const TRANSFER_SUCCEEDED = 'transfer:succeeded';

/**
 * The exact webhook body, keys in the order of the spec's table. Built field by field rather than from
 * the stored record, so the bytes do not depend on how a backend happened to order the keys.
 */
export function serializeTransferSucceeded(transfer: TransferRecord, drift: BodyDrift = 'none'): string {
  const { claimedTokens } = transfer;
  const result: Record<string, unknown> = {
    id: transfer.id,
    checkoutId: transfer.checkoutId,
    walletAddress: transfer.walletAddress,
    walletType: transfer.walletType,
    email: transfer.email,
    quantity: transfer.quantity,
    paymentMethod: transfer.paymentMethod,
    networkFeeUsd: transfer.networkFeeUsd,
    totalPriceUsd: transfer.totalPriceUsd,
    createdAt: transfer.createdAt,
    paymentCompletedAt: transfer.paymentCompletedAt,
    transferCompletedAt: transfer.transferCompletedAt,
    claimedTokens: { tokenIds: claimedTokens.tokenIds, transactionHashes: claimedTokens.transactionHashes },
  };
  if (drift === 'new-field') result.giftMessage = 'Enjoy!';
  else if (drift === 'missing-field') delete result.walletType;
  else if (drift === 'type-change') result.totalPriceUsd = transfer.totalPriceUsd.toFixed(2);
  return JSON.stringify({ event: TRANSFER_SUCCEEDED, result });
}
