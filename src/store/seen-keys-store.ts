/**
 * The ledger of seen keys: the idempotency keys (source, event name, transfer id, edit number) of events, with
 * the first event's id and when it was stored, kept longer than the events themselves. Ingest answers a repeat
 * of a key whose event retention removed as a duplicate, and an import reports it as seen before. A key is
 * seen while its event is kept or the ledger holds it. PostgreSQL's ledger records every key as it is stored
 * (its unique key across partitions); SQLite's records a key when retention removes its event, so ingest only
 * reads it. `store copy` carries the keys of removed events (a copied event brings its own).
 */
export interface SeenKeysStore {
  /**
   * Forgets up to `limit` keys stored before `seenBefore` whose event is gone (a key whose event is still
   * stored stays); one short transaction. Returns how many.
   */
  pruneSeenKeys(seenBefore: number, limit: number): Promise<number>;
  /**
   * Puts the keys of up to `limit` events stored before the ledger existed into it (the next ones by id);
   * one short transaction. Returns how many events it read: 0 once every such key is in.
   */
  backfillSeenKeys(limit: number): Promise<number>;
  /** Whether the key of a received event (edit number 0) is in the ledger, and the first event's id. */
  findSeenKey(key: { source: string; event: string; transferId: string }): Promise<SeenKeyRecord | null>;
}

/** A ledger row: the key's digest (uuid text, see seen-key.ts), the first event's id, and when it was stored. */
export interface SeenKeyRecord {
  key: string;
  eventId: number;
  seenAt: number;
}
