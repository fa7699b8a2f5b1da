/** The mock's stored records. Field names follow the checkout service spec; extras are mock-only. */

/** Seller-editable fields of a checkout (the spec's create fields plus the mock's advanced options). */
export interface CheckoutFields {
  contractAddress: string;
  contractChain: string | null;
  collectionTitle: string;
  contractType: string | null;
  successCallbackUrl: string | null;
  priceValue: number;
  priceCurrency: string;
  webhookUrls: string[];
  oneTimeLink: boolean;
  webhookSecret: string;
}

export interface CheckoutRecord extends CheckoutFields {
  id: string;
  createdAt: string;
  updatedAt: string;
}

/** Exactly the spec's `result` object of a `transfer:succeeded` webhook. */
export interface TransferRecord {
  id: string;
  checkoutId: string;
  walletAddress: string;
  walletType: WalletType;
  email: string;
  quantity: number;
  paymentMethod: string;
  networkFeeUsd: number;
  totalPriceUsd: number;
  createdAt: string;
  paymentCompletedAt: string;
  transferCompletedAt: string;
  claimedTokens: {
    tokenIds: string[];
    transactionHashes: Record<string, string[]>;
  };
}

export type WalletType = 'EMBEDDED' | 'EXTERNAL';

/** How the `X-Service-Signature` header of a delivery is made (automation hooks can break it on purpose). */
export type SignatureMode = 'valid' | 'invalid' | 'empty';

/**
 * A change of the webhook body's shape, to rehearse a sender that drifts: `new-field` adds
 * `result.giftMessage`, `missing-field` leaves out `result.walletType`, `type-change` sends
 * `result.totalPriceUsd` as a string. `none`: the spec's shape.
 */
export const BODY_DRIFTS = ['none', 'new-field', 'missing-field', 'type-change'] as const;
export type BodyDrift = (typeof BODY_DRIFTS)[number];

/** Why a webhook was sent: a purchase, or the dashboard's "Send test webhook" button. */
export type DeliveryKind = 'purchase' | 'test';

/** One webhook delivery to one URL; `attempts` counts the tries p-retry made. */
export interface DeliveryRecord {
  id: string;
  checkoutId: string;
  transferId: string;
  event: string;
  kind: DeliveryKind;
  url: string;
  signature: SignatureMode;
  status: number | null;
  ok: boolean;
  error: string | null;
  attempts: number;
  at: string;
  body: string;
}
