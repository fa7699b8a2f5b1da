/**
 * The ledger of seen keys: every idempotency key (source, event name, transfer id, edit number) stored here,
 * with the first event's id and when it was stored, kept longer than the events themselves. Ingest answers a
 * repeat of a key whose event retention removed as a duplicate, and an import reports it as seen before.
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
