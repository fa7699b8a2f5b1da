/**
 * Deliveries live in two tables (migration 013): pending_deliveries, the claimable queue, a plain table, and
 * delivery_history, the settled ones (delivered, dead), partitioned by their event's written_at. A delivery
 * changes table when it settles or is retried; the view `deliveries` is both, for reads.
 */
export const PENDING = 'pending_deliveries';
export const HISTORY = 'delivery_history';

/** Every column of both tables, in their order. */
const COLUMNS = [
  'id', 'event_id', 'rule_id', 'rule_set_hash', 'origin', 'state', 'body', 'content_type', 'attempts', 'next_attempt_at', 'lease_token',
  'last_status', 'last_error', 'dead_reason', 'created_at', 'updated_at', 'order_key', 'order_seq', 'blocked_since', 'pass_offset',
  'retryable_dead_destination', 'written_at',
] as const;
export type DeliveryColumn = (typeof COLUMNS)[number];

/** What a new delivery is written with (the others take their defaults). */
export const NEW_DELIVERY_COLUMNS: readonly DeliveryColumn[] = [
  'event_id', 'rule_id', 'rule_set_hash', 'origin', 'state', 'body', 'content_type', 'next_attempt_at', 'dead_reason', 'created_at', 'updated_at',
  'order_key', 'order_seq', 'written_at',
];

export interface DeliveryMove {
  /** The CTE's name; the inserting one is `${name}_in`, which returns the moved rows' id (and `extra`). */
  name: string;
  from: typeof PENDING | typeof HISTORY;
  /** Joined to the moving rows (alias d), e.g. `input a`. */
  using: string;
  where: string;
  /** New values by column, over d and `using` (the others keep d's). */
  set: Partial<Record<DeliveryColumn, string>>;
  /** More columns the DELETE returns (`expression AS name`), for the caller to read from `${name}`. */
  extra?: string;
}

/**
 * Two CTEs moving rows to the other table in one statement: a DELETE returning the rows as they are to be,
 * and an INSERT of them with their ids. A row being moved is locked by the DELETE: a claim (SKIP LOCKED)
 * passes it, a second mover waits and then finds it gone.
 */
export function moveDeliveries(move: DeliveryMove): string {
  const to = move.from === PENDING ? HISTORY : PENDING;
  const values = COLUMNS.map((column) => `${move.set[column] ?? `d.${column}`} AS ${column}`).join(', ');
  return `${move.name} AS (
    DELETE FROM ${move.from} d USING ${move.using} WHERE ${move.where}
    RETURNING ${values}${move.extra ? `, ${move.extra}` : ''}
  ), ${move.name}_in AS (
    INSERT INTO ${to} (${COLUMNS.join(', ')}) SELECT ${COLUMNS.join(', ')} FROM ${move.name} RETURNING id
  )`;
}

/**
 * New deliveries from `rows` (a query whose columns are named as the tables' and include `state`): the pending
 * to the queue, the others (dead at birth: a disabled rule, no destination) to the history. Ids are drawn in
 * the rows' order first, so they follow it whatever table a row goes to. Two CTEs, `${name}` and
 * `${name}_settled`, each returning id.
 */
export function insertDeliveries(name: string, rows: string, columns: readonly DeliveryColumn[]): string {
  const list = ['id', ...columns].join(', ');
  return `${name}_rows AS (
    SELECT nextval('deliveries_id_seq') AS id, r.* FROM (${rows}) r
  ), ${name} AS (
    INSERT INTO ${PENDING} (${list}) SELECT ${list} FROM ${name}_rows WHERE state = 'pending' RETURNING id
  ), ${name}_settled AS (
    INSERT INTO ${HISTORY} (${list}) SELECT ${list} FROM ${name}_rows WHERE state <> 'pending' RETURNING id
  )`;
}
