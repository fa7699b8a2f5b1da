import type { CheckoutRecord, DeliveryRecord, TransferRecord } from '../records.js';

export interface CheckoutPage {
  items: CheckoutRecord[];
  /** Position to pass as `after` for the next page; null on the last page. */
  nextAfter: number | null;
}

export interface TransferStats {
  count: number;
  tokensSold: number;
}

/**
 * Storage seam shared by the in-memory and SQLite backends. Both are synchronous (better-sqlite3 is),
 * which keeps read-check-write sequences such as the one-time link claim atomic inside `transaction`.
 * Checkouts are listed newest first by an internal insertion position (keyset, never OFFSET).
 */
export interface MockRepository {
  transaction<T>(work: () => T): T;

  insertCheckout(checkout: CheckoutRecord): void;
  getCheckout(id: string): CheckoutRecord | undefined;
  /** Newest first; `after` is a position from a previous page. */
  listCheckouts(limit: number, after?: number): CheckoutPage;
  /** Returns false when the checkout does not exist. */
  replaceCheckout(checkout: CheckoutRecord): boolean;
  /** Removes the checkout with its transfers and deliveries; false when it did not exist. */
  deleteCheckout(id: string): boolean;

  insertTransfer(transfer: TransferRecord): void;
  transferStats(checkoutId: string): TransferStats;
  /** Oldest first. */
  listTransfers(checkoutId: string): TransferRecord[];

  /** Returns false (and stores nothing) when the checkout was deleted meanwhile. */
  insertDelivery(delivery: DeliveryRecord): boolean;
  /** Oldest first. */
  listDeliveries(checkoutId: string): DeliveryRecord[];

  close(): void;
}
