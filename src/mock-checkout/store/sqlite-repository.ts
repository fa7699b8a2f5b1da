import Database from '../../sqlite-driver.js';
import type { CheckoutRecord, DeliveryRecord, TransferRecord } from '../records.js';
import type { CheckoutPage, MockRepository, TransferStats } from './repository.js';
import { applyMockSchema } from './sqlite-schema.js';

interface DataRow {
  position: number;
  data: string;
}

/** Persistent backend: one SQLite file keeps checkouts, transfers and deliveries across restarts. */
export function createSqliteRepository(file: string): MockRepository {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('foreign_keys = ON');
  db.pragma('busy_timeout = 5000');
  applyMockSchema(db);

  const statements = {
    insertCheckout: db.prepare('INSERT INTO mock_checkouts (id, data) VALUES (?, ?)'),
    getCheckout: db.prepare<[string], DataRow>('SELECT position, data FROM mock_checkouts WHERE id = ?'),
    listFirst: db.prepare<[number], DataRow>('SELECT position, data FROM mock_checkouts ORDER BY position DESC LIMIT ?'),
    listAfter: db.prepare<[number, number], DataRow>(
      'SELECT position, data FROM mock_checkouts WHERE position < ? ORDER BY position DESC LIMIT ?',
    ),
    replaceCheckout: db.prepare('UPDATE mock_checkouts SET data = ? WHERE id = ?'),
    deleteCheckout: db.prepare('DELETE FROM mock_checkouts WHERE id = ?'),
    insertTransfer: db.prepare('INSERT INTO mock_transfers (id, checkout_id, quantity, data) VALUES (?, ?, ?, ?)'),
    transferStats: db.prepare<[string], { count: number; tokensSold: number }>(
      'SELECT COUNT(*) AS count, COALESCE(SUM(quantity), 0) AS tokensSold FROM mock_transfers WHERE checkout_id = ?',
    ),
    listTransfers: db.prepare<[string], DataRow>(
      'SELECT position, data FROM mock_transfers WHERE checkout_id = ? ORDER BY position',
    ),
    // Inserting nothing when the checkout is gone avoids a foreign-key error for a delete mid-delivery.
    insertDelivery: db.prepare(
      'INSERT INTO mock_deliveries (id, checkout_id, data) SELECT ?, ?, ? WHERE EXISTS (SELECT 1 FROM mock_checkouts WHERE id = ?)',
    ),
    listDeliveries: db.prepare<[string], DataRow>(
      'SELECT position, data FROM mock_deliveries WHERE checkout_id = ? ORDER BY position',
    ),
  };

  return {
    transaction: (work) => db.transaction(work).immediate(),

    insertCheckout(checkout) {
      statements.insertCheckout.run(checkout.id, JSON.stringify(checkout));
    },
    getCheckout(id) {
      const row = statements.getCheckout.get(id);
      return row ? (JSON.parse(row.data) as CheckoutRecord) : undefined;
    },
    listCheckouts(limit, after): CheckoutPage {
      // One extra row tells whether another page follows.
      const rows = after === undefined ? statements.listFirst.all(limit + 1) : statements.listAfter.all(after, limit + 1);
      const page = rows.slice(0, limit);
      return {
        items: page.map((row) => JSON.parse(row.data) as CheckoutRecord),
        nextAfter: rows.length > limit ? page[page.length - 1]!.position : null,
      };
    },
    replaceCheckout(checkout) {
      return statements.replaceCheckout.run(JSON.stringify(checkout), checkout.id).changes === 1;
    },
    deleteCheckout(id) {
      return statements.deleteCheckout.run(id).changes === 1;
    },

    insertTransfer(transfer) {
      statements.insertTransfer.run(transfer.id, transfer.checkoutId, transfer.quantity, JSON.stringify(transfer));
    },
    transferStats(checkoutId): TransferStats {
      return statements.transferStats.get(checkoutId) ?? { count: 0, tokensSold: 0 };
    },
    listTransfers(checkoutId) {
      return statements.listTransfers.all(checkoutId).map((row) => JSON.parse(row.data) as TransferRecord);
    },

    insertDelivery(delivery) {
      const result = statements.insertDelivery.run(delivery.id, delivery.checkoutId, JSON.stringify(delivery), delivery.checkoutId);
      return result.changes === 1;
    },
    listDeliveries(checkoutId) {
      return statements.listDeliveries.all(checkoutId).map((row) => JSON.parse(row.data) as DeliveryRecord);
    },

    close() {
      if (db.open) db.close();
    },
  };
}
