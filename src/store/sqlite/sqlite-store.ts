import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import Database, { type BetterSqlite3 } from '../../sqlite-driver.js';
import { HookrelayError } from '../../errors.js';
import { systemClock, type Clock } from '../clock.js';
import type { AttemptResolution, ClaimedDelivery } from '../delivery-queue.js';
import type { EventBody, NewEvent, SaveEventResult, StoredEvent } from '../event-store.js';
import type { AttemptRecord, BlockedKey, Delivery, DeliveryDetail, DeliveryFilter, DeliveryOrigin, NewDelivery, OutboxStats, Page } from '../outbox-store.js';
import type { Store } from '../store.js';
import { toStoredEvent, type EventRow } from './event-rows.js';
import { startBackgroundCheckpointer, type BackgroundCheckpointer } from './background-checkpointer.js';
import { EventLoopLoad } from './event-loop-load.js';
import { SqliteGroupCommit } from './group-commit.js';
import { WalFsync, type FsyncFn } from './wal-fsync.js';
import { DEFAULT_SQLITE_CACHE_BYTES } from '../../sqlite-cache-size.js';
import { keyText, withExactKeys } from './key-text.js';
import { migrate } from './migrate.js';
import { toBlockedKey } from '../stored-rows.js';
import { SeenKeyQueries } from './seen-key-queries.js';
import { NEXT_EVENT_ID_SQL } from './event-ids.js';
import type { SeenKeyRecord } from '../seen-keys-store.js';
import { OutboxQueries } from './outbox.js';
import type { AttemptToRecord } from '../attempt-to-record.js';
import { MAX_RECEIVED_COUNT } from '../event-store.js';
import type { BulkDeliveryFilter } from '../bulk-store.js';
import type { ClusterNode, GoneNode, NewNode } from '../cluster-store.js';
import type { ImportedEvent, ImportOptions, ImportResult } from '../event-archive.js';
import type { EventSelection } from '../event-store.js';
import { BulkQueries } from './bulk-queries.js';
import { RetentionQueries } from './retention-queries.js';
import { ArchiveQueries } from './archive-queries.js';
import type { EventPosition, EventSearch, EventPage } from '../event-store.js';
import type { Job, JobProgress, JobState, NewJob } from '../job-store.js';
import type { DeliveryCounts } from '../outbox-store.js';
import { AdminJobQueries } from './admin-jobs.js';
import { NodeQueries } from './node-queries.js';
import { AdminQueries } from './admin-queries.js';
import { CommitListeners } from '../commit-listeners.js';
import type { NewEditedCopy } from '../event-store.js';
import type { KeptRuleSet } from '../rule-set-store.js';
import { RuleSetAndCopyQueries } from './rule-set-and-copy-queries.js';
import type { CopyExtent, CopyKey, CopyRows, CopyTable } from '../copyable-store.js';
import { CopyQueries } from './copy-queries.js';
import type { Outage, RedriveSpacing } from '../outage-store.js';
import { OutageQueries } from './outage-queries.js';
import { SharedQueries } from './shared-queries.js';
import type { ConsoleSession } from '../console-session-store.js';
import { NewEventQueries } from './new-events.js';
import type { NewEventRead, NewEvents, StreamPosition, StreamStart } from '../new-event-store.js';
import type { QuarantineRelease, ReleaseOutcome } from '../quarantine-store.js';
import { QuarantineQueries } from './quarantine-queries.js';
import { leavesDeliveriesPending } from '../deliveries-due.js';
import { SchemaQueries } from './schema-queries.js';
import type { DriftFilter, EventToLearn, ObservedSchema, SchemaLearning, SchemaLearningSave, StoredDrift } from '../schema-store.js';

export interface SqliteStoreOptions {
  dataDir: string;
  /** Where the store reads now (default: the system clock). */
  clock?: Clock;
  /**
   * full: every commit is fsynced before it is acknowledged (nothing acknowledged is lost on power failure);
   * normal: commits survive a process crash, the last ones may be lost on power failure.
   */
  durability: 'full' | 'normal';
  /** Test seam for the WAL fsync. */
  fsync?: FsyncFn;
  /**
   * How often the background thread checkpoints the WAL into the database file and syncs it (default 250 ms).
   * Under sustained load each pass writes and flushes the pages of the last interval, and the commits' WAL
   * fsyncs compete with that I/O: shorter intervals mean smaller bursts and smaller stalls, so a lower ingest p99
   * (bench/README.md).
   */
  checkpointIntervalMs?: number;
  /** WAL size past which the checkpoint thread makes it start over (default 16 MiB). */
  walRestartBytes?: number;
  /**
   * How long a synchronous write (claims, admin changes) waits for a lock held by another connection, with
   * the event loop blocked: better-sqlite3 is synchronous. Group commits never wait this way (busyRetryMs).
   */
  busyTimeoutMs?: number;
  /** How long ingest and attempt records keep retrying a lock held elsewhere before they fail (503). */
  busyRetryMs?: number;
  /**
   * durability full, while the event loop is busy: the shortest time between two fsynced ingest commits;
   * events arriving meanwhile share the next one. 0 (the default) commits and fsyncs as soon as the previous
   * fsync ends, always.
   */
  commitIntervalMs?: number;
  /** Test seam: when to pace ingest commits (default: while the event loop is busy, see EventLoopLoad). */
  paceCommitsWhen?: () => boolean;
  /**
   * A second connection to a database another store of this process opened (the delivery thread's): no
   * migrations, no checkpoint thread, no WAL fsync of its own; the first store does those for both.
   */
  attached?: boolean;
  /** Most memory the connection's page cache holds (default DEFAULT_SQLITE_CACHE_BYTES). */
  cacheBytes?: number;
}

/** SQLITE_BUSY and its extended codes: another connection holds the lock; nothing was written. */
export function isBusyError(err: unknown): boolean {
  return /^SQLITE_BUSY/.test((err as { code?: string }).code ?? '');
}

export const DATABASE_FILE = 'hookrelay.db';
const DEFAULT_BUSY_TIMEOUT_MS = 200;
/**
 * Pause between tries of a commit or write that found the lock taken: other commits, and the checkpoint thread's
 * RESTART (it syncs the database file before it), hold it a few milliseconds at most.
 */
const LOCK_RETRY_PAUSE_MS = 2;
const DEFAULT_CHECKPOINT_INTERVAL_MS = 250;

/** SQLite result codes that mean the store as a whole cannot write right now, whatever the data. */
const STORE_WIDE_CODES = /^SQLITE_(BUSY|LOCKED|FULL|READONLY|IOERR|CANTOPEN|PROTOCOL|CORRUPT|NOTADB|NOMEM)/;

export function isStoreWideError(err: unknown): boolean {
  return STORE_WIDE_CODES.test((err as { code?: string }).code ?? '');
}

/** SQLite failures (full disk, read-only file, lock held elsewhere, I/O) mean "try again later", not a bug. */
function asStoreError(err: unknown): HookrelayError {
  if (err instanceof HookrelayError) return err;
  const code = (err as { code?: string }).code ?? 'unknown';
  return new HookrelayError('store_unavailable', 'The event store could not commit; nothing was stored. Retry later.', { sqlite: code }, { cause: err });
}

export function openDatabase(options: SqliteStoreOptions): BetterSqlite3.Database {
  mkdirSync(options.dataDir, { recursive: true });
  // Waiting for a lock blocks the event loop (better-sqlite3 is synchronous): keep it short, answer 503 instead.
  const db = new Database(join(options.dataDir, DATABASE_FILE), { timeout: options.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS });
  // auto_vacuum must be chosen before the first table exists; incremental lets retention give space back.
  db.pragma('auto_vacuum = INCREMENTAL');
  db.pragma('journal_mode = WAL');
  // NORMAL for both: WAL stays consistent (fsync at checkpoints); `full` adds WalFsync after each commit.
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
  // A negative size is in KiB rather than pages.
  db.pragma(`cache_size = -${Math.max(1, Math.round((options.cacheBytes ?? DEFAULT_SQLITE_CACHE_BYTES) / 1024))}`);
  return db;
}

export class SqliteStore implements Store {
  readonly db: BetterSqlite3.Database;
  private readonly saveGroup: SqliteGroupCommit<NewEvent, SaveEventResult>;
  private readonly attemptGroup: SqliteGroupCommit<AttemptToRecord, boolean>;
  private readonly outbox: OutboxQueries;
  private readonly quarantined: QuarantineQueries;
  private readonly seenKeys: SeenKeyQueries;
  private readonly claimBatch: BetterSqlite3.Transaction<(records: AttemptToRecord[], now: number, limit: number, leaseMs: number) => { results: boolean[]; value: ClaimedDelivery[] }>;
  private readonly statements;
  private readonly walFsync: WalFsync | null;
  private readonly checkpointer: BackgroundCheckpointer | null;
  private readonly loopLoad: EventLoopLoad | null;
  private closed = false;
  /** How long a write outside the group commits may wait for the write lock (tried again, never blocking). */
  private readonly busyTimeoutMs: number;
  private readonly due = new CommitListeners();
  private readonly stored = new CommitListeners();

  private readonly clock: Clock;

  constructor(options: SqliteStoreOptions) {
    this.clock = options.clock ?? systemClock;
    this.db = openDatabase(options);
    const attached = options.attached === true;
    if (!attached) migrate(this.db);
    this.walFsync = options.durability === 'full' && !attached ? new WalFsync(join(options.dataDir, `${DATABASE_FILE}-wal`), options.fsync) : null;
    // Checkpoints move to their own thread; should it die, SQLite's automatic checkpoints take over again.
    this.db.pragma('wal_autocheckpoint = 0');
    const walRestartBytes = options.walRestartBytes ?? 16 * 1024 * 1024;
    // When the WAL starts over, SQLite truncates a file that grew past this back down to it.
    this.db.pragma(`journal_size_limit = ${4 * walRestartBytes}`);
    this.checkpointer = attached ? null : startBackgroundCheckpointer({
      path: join(options.dataDir, DATABASE_FILE),
      intervalMs: options.checkpointIntervalMs ?? DEFAULT_CHECKPOINT_INTERVAL_MS,
      restartBytes: walRestartBytes,
      onFailure: () => {
        if (!this.closed) this.db.pragma('wal_autocheckpoint = 1000');
      },
    });
    this.statements = {
      // A first delivery is a plain insert (run() reports the rowid; RETURNING would cost more per event);
      // only a repeat, which the insert skips, takes the second statement.
      // The id is given, above every removed event's (event_id_floor): SQLite alone would reuse a removed newest id.
      insertEvent: this.db.prepare(`
        INSERT INTO events (id, source, event, transfer_id, checkout_id, email, wallet_address, total_price_usd, validation,
                            received_at, last_received_at, headers, body, rule_set_hash)
        VALUES (?, ?, CAST(? AS TEXT), CAST(? AS TEXT), ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        ON CONFLICT (transfer_id, source, event, edit_number) DO NOTHING`),
      countRepeat: this.db.prepare<[number, string | Buffer, string, string | Buffer], { id: number; received_count: number }>(`
        UPDATE events SET received_count = min(received_count + 1, ${MAX_RECEIVED_COUNT}), last_received_at = ?
        WHERE transfer_id = CAST(? AS TEXT) AND source = ? AND event = CAST(? AS TEXT) AND edit_number = 0
        RETURNING id, received_count`),
      nextEventId: this.db.prepare<[], { id: number }>(NEXT_EVENT_ID_SQL),
      getEvent: this.db.prepare<[number], EventRow>('SELECT * FROM events WHERE id = ?'),
      getEventHeaders: this.db.prepare<[number], { headers: string }>('SELECT headers FROM events WHERE id = ?'),
      touchHealth: this.db.prepare('INSERT INTO store_health (id, checked_at) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET checked_at = excluded.checked_at'),
    };
    this.outbox = new OutboxQueries(this.db);
    this.quarantined = new QuarantineQueries(this.db, this.outbox);
    this.seenKeys = new SeenKeyQueries(this.db);
    const saveBatch = this.db.transaction((events: NewEvent[]) => {
      // Ids handed out in order above every stored and removed event (never one given twice).
      let nextId = this.statements.nextEventId.get()!.id;
      // Read once per batch, in its transaction: the ledger stays empty until retention first removes an event.
      const ledgerEmpty = this.seenKeys.isEmpty();
      return events.map((e) => {
        const result = this.insertEvent(e, nextId, ledgerEmpty);
        if (!result.duplicate) nextId = result.id + 1;
        return result;
      });
    });
    const walFsync = this.walFsync;
    // The checkpoint thread's WAL restart holds the write lock for a moment under sustained load (longer
    // when the disk is slow). A group commit does not wait for it with the event loop blocked: it fails at
    // once, and the batch tries again a few milliseconds later, for up to busyRetryMs, before answering 503.
    const busyRetry = { isBusy: isBusyError, forMs: options.busyRetryMs ?? 2_000, pauseMs: LOCK_RETRY_PAUSE_MS };
    this.busyTimeoutMs = options.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS;
    const commitIntervalMs = options.commitIntervalMs ?? 0;
    this.loopLoad = walFsync && commitIntervalMs > 0 && !options.paceCommitsWhen ? new EventLoopLoad() : null;
    const loopLoad = this.loopLoad;
    this.saveGroup = new SqliteGroupCommit((events) => this.withoutLockWait(() => saveBatch.immediate(events)), {
      ...(walFsync && { makeDurable: () => walFsync.sync() }),
      failsEveryItem: isStoreWideError,
      busyRetry,
      minCommitIntervalMs: commitIntervalMs,
      paceWhen: options.paceCommitsWhen ?? (() => loopLoad?.busy() ?? false),
    });
    // Attempt records need no fsync of their own: losing the last ones to a power cut means a repeat attempt.
    const attemptBatch = this.db.transaction((records: AttemptToRecord[]) => this.outbox.recordAttempts(records, this.clock.now()));
    // Attempts finished since the last commit are recorded in the claim's own transaction: one commit, not two.
    this.claimBatch = this.db.transaction((records: AttemptToRecord[], now: number, limit: number, leaseMs: number) => ({
      results: records.length > 0 ? this.outbox.recordAttempts(records, this.clock.now()) : [],
      value: this.outbox.claim(now, limit, leaseMs),
    }));
    this.attemptGroup = new SqliteGroupCommit((records) => this.withoutLockWait(() => attemptBatch.immediate(records)), { failsEveryItem: isStoreWideError, busyRetry });
  }

  /** Runs `commit` failing at once on a lock held elsewhere: SQLite's busy handler would sleep with the event loop blocked. */
  private withoutLockWait<T>(commit: () => T): T {
    // SQLite applies busy_timeout when the PRAGMA is compiled, so no statement prepared once can set it;
    // db.exec() compiles and runs it without the statement object and rows db.pragma() makes (a quarter the CPU).
    this.db.exec('PRAGMA busy_timeout = 0');
    try {
      return commit();
    } finally {
      this.db.exec(`PRAGMA busy_timeout = ${this.busyTimeoutMs}`);
    }
  }

  /**
   * A write outside the group commits (leases, heartbeats, the schema learner's save, claims, admin actions):
   * one statement or one transaction, so a try that finds the write lock taken changed nothing and is tried
   * again after a short pause, for up to the busy timeout, without blocking the event loop (the delivery
   * thread and the checkpoint thread take the lock many times a second). Store faults are store_unavailable.
   */
  private async write<T>(fn: () => T): Promise<T> {
    const deadline = performance.now() + this.busyTimeoutMs;
    for (;;) {
      if (this.closed) throw new HookrelayError('store_unavailable', 'The event store is closed.');
      try {
        return this.withoutLockWait(fn);
      } catch (err) {
        if (!isBusyError(err) || performance.now() >= deadline) throw asStoreError(err);
      }
      await new Promise((resolve) => setTimeout(resolve, LOCK_RETRY_PAUSE_MS));
    }
  }

  /**
   * Runs inside the group transaction: a key the ledger holds is a repeat of an event retention removed (or of
   * a stored one, for keys written before the ledger held only removed events' keys); else the row as `id`,
   * whose unique key finds a repeat of a stored event. A repeat only bumps the received counter.
   */
  private insertEvent(e: NewEvent, id: number, ledgerEmpty: boolean): SaveEventResult {
    const seen = ledgerEmpty ? null : this.seenKeys.firstEventOf({ ...e, editNumber: 0 });
    if (seen !== null) {
      const repeat = this.statements.countRepeat.get(e.receivedAt, keyText(e.transferId), e.source, keyText(e.event));
      // Its event is gone (retention): still a duplicate, never stored or forwarded again.
      return repeat ? { id: repeat.id, duplicate: true, receivedCount: repeat.received_count } : { id: seen, duplicate: true, receivedCount: null };
    }
    const inserted = this.statements.insertEvent.run(
      id, e.source, keyText(e.event), keyText(e.transferId), e.checkoutId, e.email, e.walletAddress, e.totalPriceUsd ?? null, e.validation,
      e.receivedAt, e.receivedAt, JSON.stringify(e.headers), e.body, e.ruleSetHash ?? null,
    );
    if (inserted.changes === 0) {
      const repeat = this.statements.countRepeat.get(e.receivedAt, keyText(e.transferId), e.source, keyText(e.event))!;
      return { id: repeat.id, duplicate: true, receivedCount: repeat.received_count };
    }
    this.quarantined.markNew(id, e);
    if (e.deliveries?.length) this.outbox.insertDeliveries(id, e.deliveries, 'ingest', e.receivedAt);
    return { id, duplicate: false, receivedCount: 1 };
  }

  async saveEvent(event: NewEvent): Promise<SaveEventResult> {
    if (this.closed) throw new HookrelayError('store_unavailable', 'The event store is closed.');
    let result: SaveEventResult;
    try {
      result = await this.saveGroup.submit(event);
    } catch (err) {
      throw asStoreError(err);
    }
    if (!result.duplicate) {
      this.stored.notify();
      if (leavesDeliveriesPending(event.deliveries)) this.due.notify();
    }
    return result;
  }

  onDeliveriesDue(listener: () => void): () => void {
    return this.due.add(listener);
  }

  onEventsStored(listener: () => void): () => void {
    return this.stored.add(listener);
  }

  private newEventSql?: NewEventQueries;

  private get newEvents(): NewEventQueries {
    return (this.newEventSql ??= new NewEventQueries(this.db));
  }

  async streamPosition(start: StreamStart): Promise<StreamPosition> {
    return this.newEvents.streamPosition(start);
  }

  async readNewEvents<B extends boolean>(filter: EventSearch, after: StreamPosition, limit: number, withBodies: B): Promise<NewEvents<NewEventRead<B>>> {
    return this.newEvents.read(filter, after, limit, withBodies);
  }

  async readEventsToLearn(after: StreamPosition, limit: number): Promise<NewEvents<EventToLearn>> {
    return this.newEvents.readToLearn(after, limit);
  }

  async getEvent(id: number): Promise<StoredEvent | null> {
    const row = this.statements.getEvent.get(id);
    return row ? toStoredEvent(withExactKeys(this.db, [row])[0]!) : null;
  }

  async getEventHeaders(eventId: number): Promise<Record<string, string> | null> {
    const row = this.statements.getEventHeaders.get(eventId);
    return row ? (JSON.parse(row.headers) as Record<string, string>) : null;
  }

  async listEvents(filter: EventSearch, page: { limit: number; after?: EventPosition }): Promise<EventPage> {
    return this.admin.listEvents(filter, page);
  }

  async claimDueDeliveries(options: { limit: number; leaseMs: number }): Promise<ClaimedDelivery[]> {
    return this.write(() => this.attemptGroup.commitAlong((records) => this.claimBatch.immediate(records, this.clock.now(), options.limit, options.leaseMs)));
  }

  async recordAttempt(deliveryId: number, leaseToken: string, attempt: AttemptRecord, resolution: AttemptResolution): Promise<boolean> {
    if (this.closed) throw new HookrelayError('store_unavailable', 'The event store is closed.');
    try {
      return await this.attemptGroup.submit({ deliveryId, leaseToken, attempt, resolution });
    } catch (err) {
      throw asStoreError(err);
    }
  }

  async saveRenderedBody(deliveryId: number, leaseToken: string, rendered: { body: Buffer; contentType: string }): Promise<boolean> {
    return this.write(() => this.outbox.saveRenderedBody(deliveryId, leaseToken, rendered, this.clock.now()));
  }

  async releaseDelivery(deliveryId: number, leaseToken: string, nextAttemptAt: number): Promise<void> {
    await this.write(() => this.outbox.releaseClaim(deliveryId, leaseToken, nextAttemptAt));
  }

  async nextDueAt(): Promise<number | null> {
    return this.outbox.nextDueAt(this.clock.now());
  }

  async renewLease(deliveryId: number, leaseToken: string, options: { leaseMs: number }): Promise<boolean> {
    return this.write(() => this.outbox.renewLease(deliveryId, leaseToken, this.clock.now() + options.leaseMs));
  }

  async listBlockedKeys(ruleId: string, limit: number): Promise<BlockedKey[]> {
    return this.outbox.blockedKeys(ruleId, limit, this.clock.now()).map(toBlockedKey);
  }

  async blockedKeyCounts(): Promise<Map<string, number>> {
    return this.outbox.blockedKeyCounts(this.clock.now());
  }

  async getDelivery(id: number): Promise<DeliveryDetail | null> {
    const delivery = this.outbox.get(id);
    return delivery && { ...delivery, redrives: this.outages.redrivesOfDelivery(id) };
  }

  async listDeliveries(filter: DeliveryFilter, page: { limit: number; before?: number }): Promise<Page<Delivery>> {
    return this.outbox.list(filter, page);
  }

  async createDeliveries(eventId: number, deliveries: NewDelivery[], origin: DeliveryOrigin): Promise<number[]> {
    const ids = await this.write(() => this.db.transaction(() => this.outbox.insertDeliveries(eventId, deliveries, origin, this.clock.now())).immediate());
    if (leavesDeliveriesPending(deliveries)) this.due.notify();
    return ids;
  }

  async releaseEvent(eventId: number, release: QuarantineRelease, routed: { ruleSetHash: string; deliveries: NewDelivery[] }): Promise<ReleaseOutcome> {
    const outcome = await this.write(() => this.db.transaction(() => this.quarantined.releaseEvent(eventId, release, routed)).immediate());
    if (outcome.released && leavesDeliveriesPending(routed.deliveries)) this.due.notify();
    return outcome;
  }

  async countHeldEvents(limit: number): Promise<number> {
    return this.quarantined.countHeld(limit);
  }

  async retryDelivery(id: number): Promise<boolean> {
    const retried = await this.write(() => this.db.transaction(() => this.outbox.retryNow(id, this.clock.now())).immediate());
    if (retried) this.due.notify();
    return retried;
  }

  async outboxStats(): Promise<OutboxStats> {
    return this.outbox.stats(this.clock.now());
  }

  // Rule sets by hash and edited copies; their SQL lives in kept-queries.ts.
  private ruleSetAndCopySql?: RuleSetAndCopyQueries;

  private get ruleSetsAndCopies(): RuleSetAndCopyQueries {
    return (this.ruleSetAndCopySql ??= new RuleSetAndCopyQueries(this.db, this.seenKeys));
  }

  async saveRuleSet(ruleSet: KeptRuleSet): Promise<void> {
    await this.write(() => this.ruleSetsAndCopies.saveRuleSet(ruleSet));
  }

  async getRuleSet(hash: string): Promise<KeptRuleSet | null> {
    return this.ruleSetsAndCopies.getRuleSet(hash);
  }

  async saveEditedCopy(copy: NewEditedCopy): Promise<number> {
    const id = await this.write(() =>
      this.db.transaction(() => {
        const copyId = this.ruleSetsAndCopies.insertEditedCopy(copy);
        if (copy.deliveries?.length) this.outbox.insertDeliveries(copyId, copy.deliveries, 'replay', copy.editedAt);
        return copyId;
      }).immediate(),
    );
    this.stored.notify();
    if (leavesDeliveriesPending(copy.deliveries)) this.due.notify();
    return id;
  }

  async checkWritable(): Promise<void> {
    if (this.closed) throw new HookrelayError('store_unavailable', 'The event store is closed.');
    try {
      this.db.transaction(() => this.statements.touchHealth.run(this.clock.now())).immediate();
    } catch (err) {
      throw asStoreError(err);
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    // Let anything already queued commit before the handle goes away.
    while (this.saveGroup.pending > 0 || this.attemptGroup.pending > 0) await new Promise((resolve) => setImmediate(resolve));
    if (this.walFsync) await this.walFsync.sync();
    this.walFsync?.close();
    this.loopLoad?.stop();
    await this.checkpointer?.stop();
    this.db.close();
  }

  // Observed schemas and drifts: their SQL lives in schema-queries.ts.
  private schemaSql?: SchemaQueries;

  private get schemas(): SchemaQueries {
    return (this.schemaSql ??= new SchemaQueries(this.db));
  }

  async loadSchemaLearning(): Promise<SchemaLearning | null> {
    return this.schemas.load();
  }

  async saveSchemaLearning(save: SchemaLearningSave): Promise<{ saved: boolean; drifts: StoredDrift[] }> {
    return this.write(() => this.schemas.saveLearning(save));
  }

  async restartSchemaLearning(): Promise<number> {
    return this.write(() => this.schemas.restartLearning(this.clock.now()));
  }

  async listObservedSchemas(filter: { source?: string; event?: string }): Promise<ObservedSchema[]> {
    return this.schemas.list(filter);
  }

  async listDrifts(filter: DriftFilter): Promise<StoredDrift[]> {
    return this.schemas.drifts(filter);
  }

  // Retention, export/import and bulk operations; their SQL lives in retention-, archive- and bulk-queries.ts.
  private retentionSql?: RetentionQueries;
  private archiveSql?: ArchiveQueries;
  private bulkSql?: BulkQueries;

  private get retention(): RetentionQueries {
    return (this.retentionSql ??= new RetentionQueries(this.db, this.seenKeys));
  }

  private get archive(): ArchiveQueries {
    return (this.archiveSql ??= new ArchiveQueries(this.db, this.seenKeys));
  }

  private get bulk(): BulkQueries {
    return (this.bulkSql ??= new BulkQueries(this.db));
  }

  async pruneEventsOlderThan(storedBefore: number, limit: number): Promise<number> {
    return this.write(() => this.retention.pruneOlderThan(storedBefore, limit));
  }

  async pruneOldestEvents(limit: number): Promise<number> {
    return this.write(() => this.retention.pruneOldest(limit));
  }

  async pruneSeenKeys(seenBefore: number, limit: number): Promise<number> {
    return this.write(() => this.seenKeys.pruneOlderThan(seenBefore, limit));
  }

  async backfillSeenKeys(limit: number): Promise<number> {
    return this.write(() => this.seenKeys.backfill(limit));
  }

  async findSeenKey(key: { source: string; event: string; transferId: string }): Promise<SeenKeyRecord | null> {
    return this.seenKeys.get({ ...key, editNumber: 0 });
  }

  async reclaimFreePages(maxPages: number): Promise<number> {
    return this.write(() => this.retention.reclaimFreePages(maxPages));
  }

  async countEvents(selection: EventSelection): Promise<number> {
    return this.archive.count(selection);
  }

  async listEventsForExport(selection: EventSelection, limit: number): Promise<StoredEvent[]> {
    return this.archive.listFull(selection, limit);
  }

  async listEventBodies(selection: EventSelection, limit: number): Promise<EventBody[]> {
    return this.archive.listBodies(selection, limit);
  }

  async firstEventIdReceivedFrom(receivedFrom: number): Promise<number | null> {
    return this.archive.firstIdReceivedFrom(receivedFrom);
  }

  async importEvents(events: ImportedEvent[], options: ImportOptions = {}): Promise<ImportResult> {
    const importedAt = options.importedAt === undefined ? this.clock.now() : options.importedAt;
    const result = await this.write(() => this.db.transaction(() => this.archive.insertAll(events, importedAt)).immediate());
    if (result.imported > 0) this.stored.notify();
    return result;
  }

  async createDeliveriesForEvents(batch: { eventId: number; deliveries: NewDelivery[] }[], origin: DeliveryOrigin): Promise<number> {
    const now = this.clock.now();
    const created = await this.write(() =>
      this.db.transaction(() => batch.reduce((sum, item) => sum + this.outbox.insertDeliveries(item.eventId, item.deliveries, origin, now).length, 0)).immediate(),
    );
    if (batch.some((item) => leavesDeliveriesPending(item.deliveries))) this.due.notify();
    return created;
  }

  async countDeadDeliveries(filter: BulkDeliveryFilter): Promise<number> {
    return this.bulk.countDead(filter);
  }

  async countDeadDeliveriesByRule(filter: BulkDeliveryFilter): Promise<Map<string, number>> {
    return this.bulk.countDeadByRule(filter);
  }

  async retryDeadDeliveries(filter: BulkDeliveryFilter, limit: number): Promise<number[]> {
    const ids = await this.write(() => this.db.transaction(() => {
      const retried = this.bulk.retryDead(filter, limit, this.clock.now());
      this.outbox.joinBackOfKeys(retried);
      return retried;
    }).immediate());
    if (ids.length > 0) this.due.notify();
    return ids;
  }

  // Admin API: list queries in admin-queries.ts, the jobs table in admin-jobs.ts.
  private adminSql?: AdminQueries;
  private jobSql?: AdminJobQueries;

  private get admin(): AdminQueries {
    return (this.adminSql ??= new AdminQueries(this.db));
  }

  private get jobs(): AdminJobQueries {
    return (this.jobSql ??= new AdminJobQueries(this.db));
  }

  async deliveryCountsByRule(ruleIds: readonly string[]): Promise<Map<string, DeliveryCounts>> {
    return this.admin.deliveryCountsByRule(ruleIds);
  }

  async deliveryCountsByEvent(eventIds: readonly number[]): Promise<Map<number, DeliveryCounts>> {
    return this.admin.deliveryCountsByEvent(eventIds);
  }

  async createJob(job: NewJob): Promise<Job> {
    return this.write(() => this.jobs.create(job));
  }

  async getJob(id: number): Promise<Job | null> {
    return this.jobs.get(id);
  }

  async listJobs(limit: number): Promise<Job[]> {
    return this.jobs.list(limit);
  }

  async updateJobProgress(id: number, progress: JobProgress): Promise<void> {
    await this.write(() => this.jobs.updateProgress(id, progress));
  }

  async finishJob(id: number, state: Exclude<JobState, 'running'>, error: string | null): Promise<boolean> {
    return this.write(() => this.jobs.finishJob(id, state, error, this.clock.now()));
  }

  async failOrphanedJobs(error: string): Promise<number> {
    return this.write(() => this.jobs.failOrphanedJobs(error, this.clock.now()));
  }

  // The node registry and leases (node-queries.ts); the file's one process clock is the store's clock.
  private nodeSql?: NodeQueries;

  private get nodes(): NodeQueries {
    return (this.nodeSql ??= new NodeQueries(this.db));
  }

  async registerNode(node: NewNode): Promise<void> {
    await this.write(() => this.nodes.registerNode(node, this.clock.now()));
  }

  async heartbeatNode(id: string, ruleSetHash: string | null): Promise<boolean> {
    return this.write(() => this.nodes.heartbeatNode(id, ruleSetHash, this.clock.now()));
  }

  async deregisterNode(id: string): Promise<void> {
    await this.write(() => this.nodes.deregisterNode(id, this.clock.now()));
  }

  async listLiveNodes(): Promise<ClusterNode[]> {
    return this.nodes.listLiveNodes(this.clock.now());
  }

  async listGoneNodes(limit: number): Promise<GoneNode[]> {
    return this.nodes.listGoneNodes(this.clock.now(), limit);
  }

  async acquireLease(name: string, holder: string, ttlMs: number): Promise<boolean> {
    return this.write(() => this.nodes.acquireLease(name, holder, ttlMs, this.clock.now()));
  }

  async releaseLease(name: string, holder: string): Promise<void> {
    await this.write(() => this.nodes.releaseLease(name, holder));
  }

  // Copying a whole store (hookrelay store copy); the SQL lives in copy-queries.ts. SQLite hands out ids
  // above the highest one by itself (INTEGER PRIMARY KEY), so nothing moves on after a write.
  private copySql?: CopyQueries;

  private get copy(): CopyQueries {
    return (this.copySql ??= new CopyQueries(this.db, this.seenKeys));
  }

  async copyExtent(): Promise<CopyExtent> {
    return this.copy.extent();
  }

  async readCopyRows<T extends CopyTable>(table: T, after: CopyKey<T> | null, limit: number): Promise<CopyRows[T][]> {
    return this.copy.read(table, after, limit);
  }

  async writeCopyRows<T extends CopyTable>(table: T, rows: CopyRows[T][]): Promise<number> {
    const added = await this.write(() => this.db.transaction(() => this.copy.write(table, rows)).immediate());
    if (added > 0 && table === 'events') this.stored.notify();
    return added;
  }

  // Outages and redrive; their SQL lives in outage-queries.ts.
  private outageSql?: OutageQueries;

  private get outages(): OutageQueries {
    return (this.outageSql ??= new OutageQueries(this.db));
  }

  async openOutage(destination: string, openedAt: number): Promise<{ outage: Outage; opened: boolean }> {
    return this.write(() => this.db.transaction(() => this.outages.open(destination, openedAt)).immediate());
  }

  async listOutages(filter: { open?: boolean; limit: number }): Promise<Outage[]> {
    return this.outages.list(filter);
  }

  async closeOutage(destination: string, spacing: RedriveSpacing): Promise<{ outage: Outage; redriven: number[] } | null> {
    const closed = await this.write(() => this.db.transaction(() => {
      const result = this.outages.close(destination, this.clock.now(), spacing);
      // An ordered rule's redriven rows join the back of their keys, as retries do.
      if (result) this.outbox.joinBackOfKeys(result.redriven);
      return result;
    }).immediate());
    if (closed && closed.redriven.length > 0) this.due.notify();
    return closed;
  }

  async probeOutage(outageId: number, options: { minIntervalMs: number; ruleIds: readonly string[] }): Promise<number | null> {
    const id = await this.write(() => this.db.transaction(() => {
      const probed = this.outages.probe(outageId, this.clock.now(), options.minIntervalMs, options.ruleIds);
      if (probed !== null) this.outbox.joinBackOfKeys([probed]);
      return probed;
    }).immediate());
    if (id !== null) this.due.notify();
    return id;
  }

  // Generated settings and console sessions; their SQL lives in shared-queries.ts.
  private sharedSql?: SharedQueries;

  private get shared(): SharedQueries {
    return (this.sharedSql ??= new SharedQueries(this.db));
  }

  async claimSetting(name: string, value: string): Promise<string> {
    return this.write(() => this.db.transaction(() => this.shared.claimSetting(name, value, this.clock.now())).immediate());
  }

  async getSetting(name: string): Promise<string | null> {
    return this.shared.getSetting(name);
  }

  async saveConsoleSession(session: ConsoleSession, keep: number): Promise<void> {
    await this.write(() => this.db.transaction(() => this.shared.saveSession(session, keep, this.clock.now())).immediate());
  }

  async getConsoleSession(idHash: string): Promise<ConsoleSession | null> {
    return this.shared.getSession(idHash, this.clock.now());
  }

  async deleteConsoleSession(idHash: string): Promise<void> {
    await this.write(() => this.shared.deleteSession(idHash));
  }
}
