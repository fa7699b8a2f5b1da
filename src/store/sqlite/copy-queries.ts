import type { BetterSqlite3 } from '../../sqlite-driver.js';
import type { CopiedDelivery, CopiedRedrive, CopiedSetting, CopyExtent, CopyRows, CopyTable } from '../copyable-store.js';
import type { StoredEvent } from '../event-store.js';
import type { Job } from '../job-store.js';
import type { Outage } from '../outage-store.js';
import type { StoredAttempt } from '../outbox-store.js';
import type { KeptRuleSet } from '../rule-set-store.js';
import { quarantineValues } from '../quarantine-columns.js';
import { copyConflict } from '../copy-conflict.js';
import { COPIED_DELIVERY_COLUMNS, DELIVERY_COLUMNS, toCopiedDelivery, toCopiedRedrive, toOutage, toJob, toStoredAttempt, type CopiedDeliveryColumns, type DeliveryRow, type JobRow, type OutageRow, type RedriveRow } from '../stored-rows.js';
import { toStoredEvent, type EventRow } from './event-rows.js';
import { keyText, withExactKeys } from './key-text.js';
import { REMOVED_EVENT_SQL, type SeenKeyQueries } from './seen-key-queries.js';
import type { SeenKeyRecord } from '../seen-keys-store.js';
import { seenKeyBytes } from '../seen-key.js';

const TABLE_NAMES: Record<Exclude<CopyTable, KeyedByText>, string> = {
  events: 'events',
  deliveries: 'deliveries',
  outages: 'outages',
  redrives: 'delivery_redrives',
  attempts: 'delivery_attempts',
  jobs: 'admin_jobs',
};

/** Tables keyed by a text column rather than an id: pages end at a name or hash, and nothing is resumed by id. */
type KeyedByText = 'ruleSets' | 'settings' | 'seenKeys';

// Each write names the conflict target `id`: an id already there takes the row's changing columns only when
// its identity matches (the WHERE), and RETURNING then answers for it; a row under another identity answers
// nothing, which the caller turns into store_copy_conflict. Any other unique key (an event's transfer) that
// a row breaks fails the statement.
const WRITE_SQL: Record<CopyTable, string> = {
  // The same value already there answers (a no-op update); a different one answers nothing: a conflict.
  settings: `
    INSERT INTO settings (name, value, created_at) VALUES (?, ?, ?)
    ON CONFLICT (name) DO UPDATE SET name = excluded.name WHERE settings.value = excluded.value
    RETURNING name`,
  ruleSets: 'INSERT INTO rule_sets (hash, kind, rules, first_loaded_at) VALUES (?, ?, ?, ?) ON CONFLICT (hash) DO NOTHING',
  // A key already there answers when it names the same first event; another event: a conflict.
  seenKeys: `
    INSERT INTO seen_keys (key, event_id, seen_at) VALUES (?, ?, ?)
    ON CONFLICT (key) DO UPDATE SET key = excluded.key WHERE seen_keys.event_id = excluded.event_id
    RETURNING key`,
  events: `
    INSERT INTO events (id, source, event, transfer_id, checkout_id, email, wallet_address, validation, received_at, last_received_at,
                        received_count, headers, body, imported_at, rule_set_hash, edit_number, edited_from, edited_at, edited_via, total_price_usd,
                        issues, quarantine, released_at, released_by, release_forced)
    VALUES (?, ?, CAST(? AS TEXT), CAST(? AS TEXT), ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
    ON CONFLICT (id) DO UPDATE SET received_count = excluded.received_count, last_received_at = excluded.last_received_at,
      quarantine = excluded.quarantine, released_at = excluded.released_at, released_by = excluded.released_by,
      release_forced = excluded.release_forced, rule_set_hash = excluded.rule_set_hash
    WHERE events.source = excluded.source AND events.event = excluded.event AND events.transfer_id = excluded.transfer_id
      AND events.edit_number = excluded.edit_number AND events.received_at = excluded.received_at AND events.body = excluded.body
    RETURNING id`,
  deliveries: `
    INSERT INTO deliveries (id, event_id, rule_id, rule_set_hash, origin, state, body, content_type, attempts, next_attempt_at, lease_token,
                            last_status, last_error, dead_reason, created_at, updated_at, order_key, order_seq, blocked_since, pass_offset,
                            retryable_dead_destination)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
    ON CONFLICT (id) DO UPDATE SET state = excluded.state, attempts = excluded.attempts, next_attempt_at = excluded.next_attempt_at,
      lease_token = excluded.lease_token, last_status = excluded.last_status, last_error = excluded.last_error, dead_reason = excluded.dead_reason,
      updated_at = excluded.updated_at, order_key = excluded.order_key, order_seq = excluded.order_seq, blocked_since = excluded.blocked_since,
      pass_offset = excluded.pass_offset, retryable_dead_destination = excluded.retryable_dead_destination
    WHERE deliveries.event_id = excluded.event_id AND deliveries.rule_id = excluded.rule_id AND deliveries.rule_set_hash = excluded.rule_set_hash
      AND deliveries.origin = excluded.origin AND deliveries.created_at = excluded.created_at
    RETURNING id`,
  outages: `
    INSERT INTO outages (id, destination, opened_at, closed_at, last_probe_at, redriven) VALUES (?, ?, ?, ?, ?, ?)
    ON CONFLICT (id) DO UPDATE SET closed_at = excluded.closed_at, last_probe_at = excluded.last_probe_at, redriven = excluded.redriven
    WHERE outages.destination = excluded.destination AND outages.opened_at = excluded.opened_at
    RETURNING id`,
  redrives: `
    INSERT INTO delivery_redrives (id, delivery_id, outage_id, kind, redriven_at, due_at) VALUES (?, ?, ?, ?, ?, ?)
    ON CONFLICT (id) DO UPDATE SET kind = excluded.kind
    WHERE delivery_redrives.delivery_id = excluded.delivery_id AND delivery_redrives.outage_id = excluded.outage_id
      AND delivery_redrives.kind = excluded.kind AND delivery_redrives.redriven_at = excluded.redriven_at
    RETURNING id`,
  attempts: `
    INSERT INTO delivery_attempts (id, delivery_id, attempt, started_at, duration_ms, url_origin, status, error_code, error_message, response_excerpt, outcome)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
    ON CONFLICT (id) DO UPDATE SET attempt = excluded.attempt
    WHERE delivery_attempts.delivery_id = excluded.delivery_id AND delivery_attempts.attempt = excluded.attempt
      AND delivery_attempts.started_at = excluded.started_at
    RETURNING id`,
  jobs: `
    INSERT INTO admin_jobs (id, kind, state, filter, rule_id, total, processed, created, failed, started_at, finished_at, error, summary)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
    ON CONFLICT (id) DO UPDATE SET state = excluded.state, total = excluded.total, processed = excluded.processed, created = excluded.created,
      failed = excluded.failed, finished_at = excluded.finished_at, error = excluded.error, summary = excluded.summary
    WHERE admin_jobs.kind = excluded.kind AND admin_jobs.started_at = excluded.started_at
    RETURNING id`,
};

type Values = (row: never) => unknown[];

const VALUES: Record<CopyTable, Values> = {
  settings: (s: CopiedSetting) => [s.name, s.value, s.createdAt],
  ruleSets: (r: KeptRuleSet) => [r.hash, r.kind, JSON.stringify(r.rules), r.firstLoadedAt],
  seenKeys: (k: SeenKeyRecord) => [seenKeyBytes(k.key), k.eventId, k.seenAt],
  events: (e: StoredEvent) => [
    e.id, e.source, keyText(e.event), keyText(e.transferId), e.checkoutId, e.email, e.walletAddress, e.validation, e.receivedAt, e.lastReceivedAt,
    e.receivedCount, JSON.stringify(e.headers), e.body, e.importedAt, e.ruleSetHash, e.edit?.number ?? 0, e.edit?.editedFrom ?? null,
    e.edit?.editedAt ?? null, e.edit?.via ?? null, e.totalPriceUsd, ...quarantineValues(e, Number),
  ],
  deliveries: (d: CopiedDelivery) => [
    d.id, d.eventId, d.ruleId, d.ruleSetHash, d.origin, d.state, d.body, d.contentType, d.attempts, d.nextAttemptAt, d.leaseToken,
    d.lastStatus, d.lastError, d.deadReason, d.createdAt, d.updatedAt, d.orderKey, d.orderSeq, d.blockedSince, d.passOffset, d.retryableDeadDestination,
  ],
  outages: (o: Outage) => [o.id, o.destination, o.openedAt, o.closedAt, o.lastProbeAt, o.redriven],
  redrives: (r: CopiedRedrive) => [r.id, r.deliveryId, r.outageId, r.kind, r.redrivenAt, r.dueAt],
  attempts: (a: StoredAttempt) => [
    a.id, a.deliveryId, a.attempt, a.startedAt, a.durationMs, a.urlOrigin, a.status, a.errorCode, a.errorMessage, a.responseExcerpt, a.outcome,
  ],
  jobs: (j: Job) => [
    j.id, j.kind, j.state, JSON.stringify(j.filter), j.ruleId, j.total, j.processed, j.created, j.failed, j.startedAt, j.finishedAt, j.error,
    j.summary ? JSON.stringify(j.summary) : null,
  ],
};

/** Whole tables read and written with their ids, for `hookrelay store copy`; synchronous, the store picks the transaction. */
export class CopyQueries {
  constructor(private readonly db: BetterSqlite3.Database, private readonly seenKeys: SeenKeyQueries) {}

  extent(): CopyExtent {
    const ruleSets = this.db.prepare<[], { n: number }>('SELECT count(*) AS n FROM rule_sets').get()!.n;
    const of = (table: string) => {
      const row = this.db.prepare<[], { n: number; lo: number | null; hi: number | null }>(`SELECT count(*) AS n, min(id) AS lo, max(id) AS hi FROM ${table}`).get()!;
      return { rows: row.n, minId: row.lo, maxId: row.hi };
    };
    const settings = this.db.prepare<[], { n: number }>('SELECT count(*) AS n FROM settings').get()!.n;
    const seenKeys = this.db.prepare<[], { n: number }>(`SELECT count(*) AS n FROM seen_keys k WHERE ${REMOVED_EVENT_SQL}`).get()!.n;
    return {
      settings: { rows: settings, minId: null, maxId: null },
      ruleSets: { rows: ruleSets, minId: null, maxId: null },
      events: of('events'),
      seenKeys: { rows: seenKeys, minId: null, maxId: null },
      deliveries: of('deliveries'),
      outages: of('outages'),
      redrives: of('delivery_redrives'),
      attempts: of('delivery_attempts'),
      jobs: of('admin_jobs'),
    };
  }

  read<T extends CopyTable>(table: T, after: number | string | null, limit: number): CopyRows[T][] {
    if (table === 'ruleSets') {
      const rows = this.db
        .prepare<[string, number], { hash: string; kind: KeptRuleSet['kind']; rules: string; first_loaded_at: number }>('SELECT * FROM rule_sets WHERE hash > ? ORDER BY hash LIMIT ?')
        .all((after as string | null) ?? '', limit);
      return rows.map((r): KeptRuleSet => ({ hash: r.hash, kind: r.kind, rules: JSON.parse(r.rules) as unknown[], firstLoadedAt: r.first_loaded_at })) as CopyRows[T][];
    }
    if (table === 'settings') {
      return this.db
        .prepare<[string, number], { name: string; value: string; created_at: number }>('SELECT * FROM settings WHERE name > ? ORDER BY name LIMIT ?')
        .all((after as string | null) ?? '', limit)
        .map((r): CopiedSetting => ({ name: r.name, value: r.value, createdAt: r.created_at })) as CopyRows[T][];
    }
    if (table === 'seenKeys') return this.seenKeys.read(after as string | null, limit) as CopyRows[T][];
    const from = (after as number | null) ?? 0;
    switch (table) {
      case 'events':
        return withExactKeys(this.db, this.db.prepare<[number, number], EventRow>('SELECT * FROM events WHERE id > ? ORDER BY id LIMIT ?').all(from, limit)).map(toStoredEvent) as CopyRows[T][];
      case 'deliveries':
        return this.db
          .prepare<[number, number], DeliveryRow & CopiedDeliveryColumns>(
            `SELECT ${DELIVERY_COLUMNS}, ${COPIED_DELIVERY_COLUMNS} FROM deliveries WHERE id > ? ORDER BY id LIMIT ?`,
          )
          .all(from, limit)
          .map((row): CopiedDelivery => toCopiedDelivery(row, row.next_attempt_at)) as CopyRows[T][];
      case 'outages':
        return this.db.prepare<[number, number], OutageRow>('SELECT * FROM outages WHERE id > ? ORDER BY id LIMIT ?').all(from, limit).map(toOutage) as CopyRows[T][];
      case 'redrives':
        return this.db
          .prepare<[number, number], RedriveRow & { id: number; delivery_id: number }>('SELECT * FROM delivery_redrives WHERE id > ? ORDER BY id LIMIT ?')
          .all(from, limit)
          .map(toCopiedRedrive) as CopyRows[T][];
      case 'attempts':
        return this.db.prepare<[number, number], Record<string, unknown>>('SELECT * FROM delivery_attempts WHERE id > ? ORDER BY id LIMIT ?').all(from, limit).map(toStoredAttempt) as CopyRows[T][];
      default:
        return this.db.prepare<[number, number], JobRow>('SELECT * FROM admin_jobs WHERE id > ? ORDER BY id LIMIT ?').all(from, limit).map(toJob) as CopyRows[T][];
    }
  }

  /** Must run inside a write transaction: a conflict throws, and the caller's transaction rolls the batch back. */
  write<T extends CopyTable>(table: T, rows: readonly CopyRows[T][]): number {
    const statement = this.db.prepare(WRITE_SQL[table]);
    const values = VALUES[table] as (row: CopyRows[T]) => unknown[];
    if (table === 'ruleSets') return rows.reduce((sum, row) => sum + statement.run(...values(row)).changes, 0);
    if (table === 'settings') return rows.reduce((sum, row) => sum + this.writeSetting(statement, row as CopiedSetting), 0);
    if (table === 'seenKeys') return rows.reduce((sum, row) => sum + this.writeSeenKey(statement, row as SeenKeyRecord), 0);
    const present = this.db.prepare<[number], { id: number }>(`SELECT id FROM ${TABLE_NAMES[table as Exclude<CopyTable, KeyedByText>]} WHERE id = ?`);
    let added = 0;
    for (const row of rows) {
      const id = (row as { id: number }).id;
      const existed = present.get(id) !== undefined;
      let written: unknown;
      try {
        written = statement.get(...values(row));
      } catch (err) {
        if (/^SQLITE_CONSTRAINT/.test((err as { code?: string }).code ?? '')) throw copyConflict(table, id, (err as Error).message);
        throw err;
      }
      if (written === undefined) throw copyConflict(table, id);
      if (table === 'events') this.checkSeenKey(row as StoredEvent);
      if (!existed) added += 1;
    }
    return added;
  }

  /** A copied event whose key the ledger holds for another event (one retention removed) is a conflict. */
  private checkSeenKey(e: StoredEvent): void {
    const seen = this.seenKeys.firstEventOf({ ...e, editNumber: e.edit?.number ?? 0 });
    if (seen !== null && seen !== e.id) throw copyConflict('events', e.id, `its key was first seen as event ${seen}`);
  }

  /** 1 when the key was new, 0 when the target held it for the same event; another event is a conflict. */
  private writeSeenKey(statement: BetterSqlite3.Statement, row: SeenKeyRecord): number {
    const existed = this.seenKeys.has(row.key);
    if (statement.get(...VALUES.seenKeys(row as never)) === undefined) throw copyConflict('seenKeys', row.key, `first seen as event ${row.eventId}`);
    return existed ? 0 : 1;
  }

  /** 1 when the setting was new, 0 when the target held the same value; a different value is a conflict. */
  private writeSetting(statement: BetterSqlite3.Statement, setting: CopiedSetting): number {
    const existed = this.db.prepare<[string], { name: string }>('SELECT name FROM settings WHERE name = ?').get(setting.name) !== undefined;
    if (statement.get(...VALUES.settings(setting as never)) === undefined) throw copyConflict('settings', setting.name, 'another value');
    return existed ? 0 : 1;
  }
}
