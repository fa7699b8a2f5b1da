import type { EventSelection } from '../event-store.js';
import { eventText } from '../storable-text.js';
import type { SqlParams } from './sql-params.js';

/**
 * The WHERE conditions of an event selection on `events` aliased `alias` ("true" for none). Email and wallet
 * compare without case (their indexes are on lower()). The delivery state is written as a literal: it is one
 * of three known words, and a literal lets the planner use the partial index of unsettled deliveries.
 */
export function eventSelectionSql(selection: EventSelection, params: SqlParams, alias = 'e'): string {
  const where: string[] = [];
  const equals = (column: string, value: unknown): void => {
    if (value !== undefined) where.push(`${alias}.${column} = ${params.add(value)}`);
  };
  // The text columns of an event hold eventText forms: a filter compares the same form.
  const text = (value: string | undefined): string | undefined => (value === undefined ? undefined : eventText(value));
  equals('event', text(selection.event));
  equals('source', text(selection.source));
  equals('validation', selection.validation);
  equals('quarantine', selection.quarantine);
  equals('checkout_id', text(selection.checkoutId));
  equals('transfer_id', text(selection.transferId));
  if (selection.email !== undefined) where.push(`lower(${alias}.email) = lower(${params.add(eventText(selection.email))})`);
  if (selection.walletAddress !== undefined) where.push(`lower(${alias}.wallet_address) = lower(${params.add(eventText(selection.walletAddress))})`);
  if (selection.receivedFrom !== undefined) {
    const from = params.add(selection.receivedFrom);
    // An event is written when received or later (an import, a move out of a dropped partition), or before the
    // partitions (0, the legacy partition): the same bound on written_at leaves out the older partitions.
    where.push(`${alias}.received_at >= ${from} AND (${alias}.written_at >= ${from} OR ${alias}.written_at < 1)`);
  }
  if (selection.receivedTo !== undefined) where.push(`${alias}.received_at < ${params.add(selection.receivedTo)}`);
  if (selection.afterId !== undefined) where.push(`${alias}.id > ${params.add(selection.afterId)}`);
  if (selection.throughId !== undefined) where.push(`${alias}.id <= ${params.add(selection.throughId)}`);
  if (selection.deliveryState !== undefined) where.push(`EXISTS (SELECT 1 FROM deliveries ds WHERE ds.event_id = ${alias}.id AND ds.written_at = ${alias}.written_at AND ${deliveryStateSql('ds', selection.deliveryState)})`);
  return where.length > 0 ? where.join(' AND ') : 'true';
}

/** "Has a delivery in this state", with the state as a checked literal. */
export function deliveryStateSql(alias: string, state: string): string {
  if (state !== 'pending' && state !== 'delivered' && state !== 'dead') throw new Error(`unknown delivery state ${JSON.stringify(state)}`);
  return `${alias}.state = '${state}'`;
}
