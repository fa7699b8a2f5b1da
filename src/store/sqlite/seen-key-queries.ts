import type { BetterSqlite3 } from '../../sqlite-driver.js';
import { seenKey, seenKeyBytes, seenKeyText } from '../seen-key.js';
import type { SeenKeyRecord } from '../seen-keys-store.js';
import { fromKeyBytes, keyText } from './key-text.js';

interface SeenKeyRow {
  key: Buffer;
  event_id: number;
  seen_at: number;
}

/** The parts of an event's idempotency key. */
export interface KeyParts {
  source: string;
  event: string;
  transferId: string;
  editNumber: number;
}

/** A ledger row (`k`) whose event is no longer stored: what `store copy` carries (both backends). */
export const REMOVED_EVENT_SQL = 'NOT EXISTS (SELECT 1 FROM events e WHERE e.id = k.event_id)';

/** Edit numbers tried past the highest stored one when earlier copies were pruned (their keys stay in the ledger). */
const MAX_EDIT_NUMBER_SKIPS = 10_000;

/**
 * The ledger of seen keys (migrations 017 and 018), synchronous; the store picks the transaction. It holds the
 * keys of removed events, written by retention in the transaction that removes them; a kept event's unique
 * key answers for its own key. Keys written before migration 018 for kept events stay and are still true.
 */
export class SeenKeyQueries {
  private readonly find;
  private readonly any;
  private readonly insert;
  private readonly prune;
  private readonly eventExists;
  private readonly keyColumnsOf;
  private readonly storedWithKey;

  constructor(private readonly db: BetterSqlite3.Database) {
    this.find = db.prepare<[Buffer], SeenKeyRow>('SELECT * FROM seen_keys WHERE key = ?');
    this.any = db.prepare<[], { one: number }>('SELECT 1 AS one FROM seen_keys LIMIT 1');
    this.insert = db.prepare<[Buffer, number, number]>('INSERT INTO seen_keys (key, event_id, seen_at) VALUES (?, ?, ?) ON CONFLICT (key) DO NOTHING');
    this.prune = db.prepare<[number, number]>(`
      DELETE FROM seen_keys WHERE key IN (
        SELECT k.key FROM seen_keys k
        WHERE k.seen_at < ? AND ${REMOVED_EVENT_SQL}
        ORDER BY k.seen_at LIMIT ?)`);
    this.eventExists = db.prepare<[number], { id: number }>('SELECT id FROM events WHERE id = ?');
    this.storedWithKey = db.prepare<[string | Buffer, string, string | Buffer, number], { id: number; seen_at: number }>(`
      SELECT id, coalesce(imported_at, received_at) AS seen_at FROM events
      WHERE transfer_id = CAST(? AS TEXT) AND source = ? AND event = CAST(? AS TEXT) AND edit_number = ?`);
    this.keyColumnsOf = db.prepare<[number], { id: number; source: Buffer; event: Buffer; transfer_id: Buffer; edit_number: number; seen_at: number }>(`
      SELECT id, CAST(source AS BLOB) AS source, CAST(event AS BLOB) AS event, CAST(transfer_id AS BLOB) AS transfer_id, edit_number,
             coalesce(imported_at, received_at) AS seen_at
      FROM events WHERE id = ?`);
  }

  /** The first event's id of a key in the ledger, and whether that event is still stored. */
  lookup(parts: KeyParts): { eventId: number; stored: boolean } | null {
    const eventId = this.firstEventOf(parts);
    return eventId === null ? null : { eventId, stored: this.eventExists.get(eventId) !== undefined };
  }

  /** A key is seen when the ledger holds it (its event removed) or an event stored with it is kept. */
  get(parts: KeyParts): SeenKeyRecord | null {
    const key = seenKey(parts.source, parts.event, parts.transferId, parts.editNumber);
    const row = this.find.get(key);
    if (row) return toRecord(row);
    const stored = this.storedWithKey.get(keyText(parts.transferId), parts.source, keyText(parts.event), parts.editNumber);
    return stored ? toRecord({ key, event_id: stored.id, seen_at: stored.seen_at }) : null;
  }

  has(keyText: string): boolean {
    return this.find.get(seenKeyBytes(keyText)) !== undefined;
  }

  /** Whether the ledger holds no key: until retention first removes an event, ingest need not hash and look up each key. */
  isEmpty(): boolean {
    return this.any.get() === undefined;
  }

  /** The first event's id of a key the ledger holds (ingest reads the ledger; retention writes it). */
  firstEventOf(parts: KeyParts): number | null {
    return this.find.get(seenKey(parts.source, parts.event, parts.transferId, parts.editNumber))?.event_id ?? null;
  }

  /** The lowest edit number from `from` on whose key the ledger does not hold (a pruned copy's number is not given again). */
  freeEditNumber(parts: Omit<KeyParts, 'editNumber'>, from: number): number {
    for (let n = from; n < from + MAX_EDIT_NUMBER_SKIPS; n += 1) {
      if (!this.find.get(seenKey(parts.source, parts.event, parts.transferId, n))) return n;
    }
    throw new Error(`no free edit number among ${MAX_EDIT_NUMBER_SKIPS} after ${from}`);
  }

  /** Puts the keys of events about to be deleted into the ledger (those stored before it existed are not there yet). */
  keepKeysOf(eventIds: readonly number[]): void {
    for (const id of eventIds) {
      const row = this.keyColumnsOf.get(id);
      if (!row) continue;
      this.insert.run(seenKey(fromKeyBytes(row.source), fromKeyBytes(row.event), fromKeyBytes(row.transfer_id), row.edit_number), row.id, row.seen_at);
    }
  }

  /** The next events stored before the ledger existed, their keys put in it; returns how many it read. */
  backfill(limit: number): number {
    return this.db.transaction(() => {
      const walk = this.db.prepare<[], { next_event_id: number; below_event_id: number }>(
        'SELECT next_event_id, below_event_id FROM seen_keys_backfill WHERE id = 1 AND next_event_id < below_event_id').get();
      if (!walk) return 0;
      const ids = this.db.prepare<[number, number, number], { id: number }>('SELECT id FROM events WHERE id >= ? AND id < ? ORDER BY id LIMIT ?')
        .all(walk.next_event_id, walk.below_event_id, limit).map((r) => r.id);
      this.keepKeysOf(ids);
      const next = ids.length < limit ? walk.below_event_id : ids.at(-1)! + 1;
      this.db.prepare<[number]>('UPDATE seen_keys_backfill SET next_event_id = ? WHERE id = 1').run(next);
      return ids.length;
    }).immediate();
  }

  pruneOlderThan(seenBefore: number, limit: number): number {
    return this.db.transaction(() => this.prune.run(seenBefore, limit).changes).immediate();
  }

  /** Copy: up to `limit` keys of removed events after `after` (uuid text), ascending (a kept event carries its own key). */
  read(after: string | null, limit: number): SeenKeyRecord[] {
    return this.db
      .prepare<[Buffer, number], SeenKeyRow>(`SELECT * FROM seen_keys k WHERE key > ? AND ${REMOVED_EVENT_SQL} ORDER BY key LIMIT ?`)
      .all(after === null ? Buffer.alloc(0) : seenKeyBytes(after), limit)
      .map(toRecord);
  }
}

function toRecord(row: SeenKeyRow): SeenKeyRecord {
  return { key: seenKeyText(row.key), eventId: row.event_id, seenAt: row.seen_at };
}
