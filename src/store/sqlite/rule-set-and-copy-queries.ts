import type { BetterSqlite3 } from '../../sqlite-driver.js';
import { keyText } from './key-text.js';
import type { NewEditedCopy } from '../event-store.js';
import type { KeptRuleSet, RuleSetKind } from '../rule-set-store.js';
import { NEXT_EVENT_ID_SQL } from './event-ids.js';
import type { SeenKeyQueries } from './seen-key-queries.js';

interface RuleSetRow {
  hash: string;
  kind: RuleSetKind;
  rules: string;
  first_loaded_at: number;
}

/** Rule sets kept by hash, and edited copies of events; synchronous, the store picks the transaction. */
export class RuleSetAndCopyQueries {
  private readonly insertRuleSet;
  private readonly ruleSetByHash;
  private readonly nextEditNumber;
  private readonly insertCopy;

  constructor(db: BetterSqlite3.Database, private readonly seenKeys: SeenKeyQueries) {
    this.insertRuleSet = db.prepare('INSERT INTO rule_sets (hash, kind, rules, first_loaded_at) VALUES (?, ?, ?, ?) ON CONFLICT (hash) DO NOTHING');
    this.ruleSetByHash = db.prepare<[string], RuleSetRow>('SELECT * FROM rule_sets WHERE hash = ?');
    // Through the idempotency key's index (transfer_id first): the copies of one transfer are few.
    this.nextEditNumber = db.prepare<[string | Buffer, string, string | Buffer], { n: number }>(
      'SELECT coalesce(max(edit_number), 0) + 1 AS n FROM events WHERE transfer_id = CAST(? AS TEXT) AND source = ? AND event = CAST(? AS TEXT)',
    );
    this.insertCopy = db.prepare(`
      INSERT INTO events (id, source, event, transfer_id, checkout_id, email, wallet_address, total_price_usd, validation, received_at,
                          last_received_at, headers, body, rule_set_hash, edit_number, edited_from, edited_at, edited_via)
      VALUES ((${NEXT_EVENT_ID_SQL}), ?, CAST(? AS TEXT), CAST(? AS TEXT), ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
  }

  saveRuleSet(ruleSet: KeptRuleSet): void {
    this.insertRuleSet.run(ruleSet.hash, ruleSet.kind, JSON.stringify(ruleSet.rules), ruleSet.firstLoadedAt);
  }

  getRuleSet(hash: string): KeptRuleSet | null {
    const row = this.ruleSetByHash.get(hash);
    if (!row) return null;
    return { hash: row.hash, kind: row.kind, rules: JSON.parse(row.rules) as unknown[], firstLoadedAt: row.first_loaded_at };
  }

  /** Must run inside a write transaction: the edit number is read and used in it. */
  insertEditedCopy(copy: NewEditedCopy): number {
    const stored = this.nextEditNumber.get(keyText(copy.transferId), copy.source, keyText(copy.event))!.n;
    const n = this.seenKeys.freeEditNumber(copy, stored);
    const inserted = this.insertCopy.run(
      copy.source, keyText(copy.event), keyText(copy.transferId), copy.checkoutId, copy.email, copy.walletAddress, copy.totalPriceUsd ?? null, copy.validation, copy.editedAt, copy.editedAt,
      JSON.stringify(copy.headers), copy.body, copy.ruleSetHash ?? null, n, copy.editedFrom, copy.editedAt, copy.via,
    );
    return Number(inserted.lastInsertRowid);
  }
}
