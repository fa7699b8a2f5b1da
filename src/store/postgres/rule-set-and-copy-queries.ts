import type pg from 'pg';
import type { NewEditedCopy } from '../event-store.js';
import type { KeptRuleSet } from '../rule-set-store.js';
import { eventText } from '../storable-text.js';
import { named } from './sql-params.js';
import { toKeptRuleSet, type RuleSetRow } from '../stored-rows.js';

const SAVE_RULE_SET = named('save_rule_set', 'INSERT INTO rule_sets (hash, kind, rules, first_loaded_at) VALUES ($1, $2, $3, $4) ON CONFLICT (hash) DO NOTHING');
const GET_RULE_SET = named('get_rule_set', 'SELECT * FROM rule_sets WHERE hash = $1');
// Two nodes editing the same transfer at once take turns: each reads the highest edit number after the other's commit
// (a lock key two transfers happen to share only makes them wait on each other).
const LOCK_TRANSFER = named('lock_transfer', "SELECT pg_advisory_xact_lock(hashtextextended($1 || '/' || $2 || '/' || $3, 0))");
// Through the idempotency key's index (transfer_id first): the copies of one transfer are few.
// A number a pruned copy had is not given again: its key stays in the ledger of seen keys. The series is read in
// its order and the first free number ends it (usually the first one tried).
const NEXT_EDIT_NUMBER = named('next_edit_number', `
  SELECT n FROM (SELECT coalesce(max(edit_number), 0) + 1 AS first FROM events WHERE transfer_id = $1 AND source = $2 AND event = $3) f,
    generate_series(f.first, f.first + 10000) n
  WHERE NOT EXISTS (SELECT 1 FROM seen_keys k WHERE k.key = hookrelay_seen_key($2, $3, $1, n::int))
  LIMIT 1`);
const INSERT_COPY = named('insert_copy', `
  INSERT INTO events (source, event, transfer_id, checkout_id, email, wallet_address, validation, received_at, last_received_at,
                      headers, body, rule_set_hash, edit_number, edited_from, edited_at, edited_via, total_price_usd, written_at)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8, $9, $10, $11, $12, $13, $8, $14, $15, $8)
  RETURNING id`);

/** Rule sets kept by hash, and edited copies of events. */
export class RuleSetAndCopyQueries {
  constructor(private readonly db: pg.Pool) {}

  async saveRuleSet(ruleSet: KeptRuleSet): Promise<void> {
    await this.db.query({ ...SAVE_RULE_SET, values: [ruleSet.hash, ruleSet.kind, JSON.stringify(ruleSet.rules), ruleSet.firstLoadedAt] });
  }

  async getRuleSet(hash: string): Promise<KeptRuleSet | null> {
    const row = (await this.db.query<RuleSetRow>({ ...GET_RULE_SET, values: [hash] })).rows[0];
    return row ? toKeptRuleSet(row) : null;
  }

  /** In the caller's transaction: the copy with the next edit number of its transfer; returns its id. */
  async insertEditedCopy(client: pg.PoolClient, copy: NewEditedCopy): Promise<number> {
    const key = [eventText(copy.transferId), eventText(copy.source), eventText(copy.event)];
    await client.query({ ...LOCK_TRANSFER, values: key });
    const { n } = (await client.query<{ n: number }>({ ...NEXT_EDIT_NUMBER, values: key })).rows[0]!;
    const { rows } = await client.query<{ id: number }>({
      ...INSERT_COPY,
      values: [
        key[1], key[2], key[0], eventText(copy.checkoutId), eventText(copy.email), eventText(copy.walletAddress), copy.validation, copy.editedAt,
        JSON.stringify(copy.headers), copy.body, copy.ruleSetHash ?? null, n, copy.editedFrom, copy.via,
        copy.totalPriceUsd ?? null,
      ],
    });
    return rows[0]!.id;
  }
}
