import type { EventFilter, EventSelection } from '../event-store.js';
import { coarseTerms } from './coarse-columns.js';
import { deliveryStateSql } from './delivery-state-sql.js';
import { keyParam, keyValue } from './key-text.js';

// Columns with an index of their own; event, source and validation are coarse-columns.ts's concern.
const EQUALS: [keyof EventFilter, string][] = [
  ['checkoutId', 'checkout_id'], ['email', 'email'], ['walletAddress', 'wallet_address'], ['transferId', 'transfer_id'],
];

/** The WHERE conditions (joined with AND, or "1" for none) and their parameters, on `events` aliased as `alias`. */
export function eventSelectionSql(selection: EventSelection, alias = 'events'): { sql: string; params: unknown[] } {
  const where: string[] = [];
  const params: unknown[] = [];
  for (const term of coarseTerms(selection, alias)) {
    where.push(term.sql);
    params.push(...term.params);
  }
  for (const [key, column] of EQUALS) {
    if (selection[key] !== undefined) {
      where.push(`${alias}.${column} = ${keyParam(column)}`);
      params.push(keyValue(column, selection[key] as string));
    }
  }
  if (selection.receivedFrom !== undefined) { where.push(`${alias}.received_at >= ?`); params.push(selection.receivedFrom); }
  if (selection.receivedTo !== undefined) { where.push(`${alias}.received_at < ?`); params.push(selection.receivedTo); }
  if (selection.afterId !== undefined) { where.push(`${alias}.id > ?`); params.push(selection.afterId); }
  if (selection.throughId !== undefined) { where.push(`${alias}.id <= ?`); params.push(selection.throughId); }
  if (selection.deliveryState !== undefined) {
    where.push(`EXISTS (SELECT 1 FROM deliveries ds WHERE ds.event_id = ${alias}.id AND ${deliveryStateSql('ds', selection.deliveryState)})`);
  }
  return { sql: where.length > 0 ? where.join(' AND ') : '1', params };
}
