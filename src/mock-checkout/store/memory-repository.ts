import type { CheckoutRecord, DeliveryRecord, TransferRecord } from '../records.js';
import type { CheckoutPage, MockRepository, TransferStats } from './repository.js';

interface Positioned<T> {
  position: number;
  record: T;
}

/** Default backend: plain maps, gone when the process ends. Records are cloned so callers cannot mutate state. */
export function createMemoryRepository(): MockRepository {
  const checkouts = new Map<string, Positioned<CheckoutRecord>>();
  const transfers: TransferRecord[] = [];
  const deliveries: DeliveryRecord[] = [];
  let nextPosition = 1;

  return {
    transaction: (work) => work(),

    insertCheckout(checkout) {
      checkouts.set(checkout.id, { position: nextPosition++, record: structuredClone(checkout) });
    },
    getCheckout(id) {
      const found = checkouts.get(id);
      return found ? structuredClone(found.record) : undefined;
    },
    listCheckouts(limit, after): CheckoutPage {
      const newestFirst = [...checkouts.values()]
        .filter((entry) => after === undefined || entry.position < after)
        .sort((a, b) => b.position - a.position);
      const page = newestFirst.slice(0, limit);
      const hasMore = newestFirst.length > limit;
      return {
        items: page.map((entry) => structuredClone(entry.record)),
        nextAfter: hasMore ? page[page.length - 1]!.position : null,
      };
    },
    replaceCheckout(checkout) {
      const found = checkouts.get(checkout.id);
      if (!found) return false;
      found.record = structuredClone(checkout);
      return true;
    },
    deleteCheckout(id) {
      if (!checkouts.delete(id)) return false;
      removeWhere(transfers, (t) => t.checkoutId === id);
      removeWhere(deliveries, (d) => d.checkoutId === id);
      return true;
    },

    insertTransfer(transfer) {
      transfers.push(structuredClone(transfer));
    },
    transferStats(checkoutId): TransferStats {
      const own = transfers.filter((t) => t.checkoutId === checkoutId);
      return { count: own.length, tokensSold: own.reduce((sum, t) => sum + t.quantity, 0) };
    },
    listTransfers(checkoutId) {
      return transfers.filter((t) => t.checkoutId === checkoutId).map((t) => structuredClone(t));
    },

    insertDelivery(delivery) {
      if (!checkouts.has(delivery.checkoutId)) return false;
      deliveries.push(structuredClone(delivery));
      return true;
    },
    listDeliveries(checkoutId) {
      return deliveries.filter((d) => d.checkoutId === checkoutId).map((d) => structuredClone(d));
    },

    close() {},
  };
}

function removeWhere<T>(items: T[], predicate: (item: T) => boolean): void {
  for (let i = items.length - 1; i >= 0; i--) if (predicate(items[i]!)) items.splice(i, 1);
}
