import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { HookrelayError } from '../../errors.js';
import { CommitListeners } from '../commit-listeners.js';
import type { BulkDeliveryFilter } from '../bulk-store.js';
import type { ClusterNode, GoneNode, NewNode } from '../cluster-store.js';
import type { ConsoleSession } from '../console-session-store.js';
import type { CopyExtent, CopyKey, CopyRows, CopyTable } from '../copyable-store.js';
import type { AttemptResolution, ClaimedDelivery } from '../delivery-queue.js';
import type { ImportedEvent, ImportOptions, ImportResult } from '../event-archive.js';
import type { EventBody, EventPage, EventPosition, EventSearch, EventSelection, NewEditedCopy, NewEvent, SaveEventResult, StoredEvent } from '../event-store.js';
import type { Job, JobProgress, JobState, NewJob } from '../job-store.js';
import type { NewEventRead, NewEvents, StreamPosition, StreamStart } from '../new-event-store.js';
import type { AttemptRecord, BlockedKey, Delivery, DeliveryCounts, DeliveryDetail, DeliveryFilter, DeliveryOrigin, NewDelivery, OutboxStats, Page } from '../outbox-store.js';
import type { KeptRuleSet } from '../rule-set-store.js';
import type { Store } from '../store.js';
import { AdminQueries } from './admin-queries.js';
import { PostgresGroupCommit } from './group-commit.js';
import { ClockOffset } from './clock-offset.js';
import { systemClock, type Clock } from '../clock.js';
import { CopyQueries } from './copy-queries.js';
import type { SeenKeyRecord } from '../seen-keys-store.js';
import { clientConfig, COMMIT_TIMEOUT_MS, openPool, type PostgresSettings } from './connection.js';
import { Announcer, DUE_CHANNEL, EVENTS_CHANNEL, NodeNotifications } from './notifications.js';
import { NewEventQueries } from './new-events.js';
import { EventQueries } from './event-queries.js';
import { RuleSetAndCopyQueries } from './rule-set-and-copy-queries.js';
import { NodeQueries } from './node-queries.js';
import { migrate } from './migrate.js';
import { OutboxQueries } from './outbox-queries.js';
import type { AttemptToRecord } from '../attempt-to-record.js';
import { OutageQueries } from './outage-queries.js';
import type { Outage, RedriveSpacing } from '../outage-store.js';
import { saveEvents } from './save-events.js';
import { createPartitions, DEFAULT_PARTITION_DAYS, ensurePartitionsAhead, isMissingPartition, listPartitions, type TimePartition } from './partitions.js';
import { maintainPartitions } from './partition-maintenance.js';
import type { PartitionPlan, PartitionReport } from '../retention-store.js';
import type { QuarantineRelease, ReleaseOutcome } from '../quarantine-store.js';
import { QuarantineQueries } from './quarantine-queries.js';
import { SchemaQueries } from './schema-queries.js';
import type { DriftFilter, EventToLearn, ObservedSchema, SchemaLearning, SchemaLearningSave, StoredDrift } from '../schema-store.js';
import { withDeadline } from './sql-params.js';
import { SharedQueries } from './shared-queries.js';
import { leavesDeliveriesPending } from '../deliveries-due.js';
import { asReadError, asStoreError, isRetryable, isStoreWideError } from './store-errors.js';

/** How often event streams re-read while no notification can reach this node (notifications off or lost). */
export const STREAM_POLL_MS = 1_000;
/** Other nodes' idle workers hear of new due deliveries at most this late (this node's own hear at once). */
const DUE_ANNOUNCE_GAP_MS = 5;
/** Other nodes' event streams hear of new events at most this late: a person is watching them. */
const EVENTS_ANNOUNCE_GAP_MS = 25;

const DATABASE_CLOCK_MS = 'SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint AS now';

/** The time an event is written at, its partition's key: its receipt, or its import when later (as import_event writes it). */
const writtenAt = (receivedAt: number, importedAt: number | null | undefined): number => Math.max(importedAt ?? receivedAt, receivedAt);

export interface PostgresStoreOptions extends PostgresSettings {
  /** Where the store reads now (default: the system clock); leases and heartbeats keep the database's. */
  clock?: Clock;
  /** Days of history per partition of events, deliveries and attempts (`retention.partitionDays`, default 7). */
  partitionDays?: number;
}

/**
 * Whether an ingest commit could go through now: one write that takes the same table locks as one (ROW
 * EXCLUSIVE on events and pending_deliveries, so an operator's LOCK TABLE makes it wait, up to lock_timeout) and
 * commits as one does (synchronous_commit on), without touching either table's rows.
 */
const PROBE_COMMIT = `
  WITH events_lock AS (UPDATE events SET id = id WHERE false RETURNING 1),
       deliveries_lock AS (UPDATE pending_deliveries SET id = id WHERE false RETURNING 1)
  INSERT INTO store_health (id, checked_at)
  SELECT 1, $1 WHERE NOT EXISTS (SELECT 1 FROM events_lock UNION ALL SELECT 1 FROM deliveries_lock)
  ON CONFLICT (id) DO UPDATE SET checked_at = excluded.checked_at`;

/**
 * The Store on PostgreSQL, shared by any number of nodes. Every guarantee of the SQLite store holds: an
 * event is acknowledged only after the COMMIT that holds it (synchronous_commit on), stored once per
 * (source, event, transfer id) whichever node receives which copy, with its raw bytes; lists page by keyset;
 * a database that cannot commit answers 503 store_unavailable, and the pool opens new connections by itself
 * once it can again.
 */
export class PostgresStore implements Store {
  private readonly pool: pg.Pool;
  /** Leases, heartbeats and due times are the database's clock: node times cross to it through this. */
  private readonly databaseClock: ClockOffset;
  private readonly clock: Clock;
  private readonly saveGroup: PostgresGroupCommit<NewEvent, SaveEventResult>;
  private readonly attemptGroup: PostgresGroupCommit<AttemptToRecord, boolean>;
  private readonly outbox: OutboxQueries;
  private readonly quarantined: QuarantineQueries;
  private readonly events: EventQueries;
  private readonly admin: AdminQueries;
  private readonly ruleSetsAndCopies: RuleSetAndCopyQueries;
  private readonly copy: CopyQueries;
  private readonly nodes: NodeQueries;
  private readonly outages: OutageQueries;
  private readonly shared: SharedQueries;
  private readonly due = new CommitListeners();
  /** Commits of new events by any node (event streams): this node's at once, the others' by NOTIFY or poll. */
  private readonly stored = new CommitListeners();
  private readonly newEvents: NewEventQueries;
  /** This process's id in notifications: its own are not echoed back to it. */
  private readonly nodeId = randomUUID();
  private notifications: NodeNotifications | null = null;
  private dueAnnouncer: Announcer | null = null;
  private eventsAnnouncer: Announcer | null = null;
  /** Wakes event streams every STREAM_POLL_MS while they are open and no notification can reach them. */
  private streamPoll: NodeJS.Timeout | null = null;
  private closed = false;
  private readonly commitTimeoutMs: number;
  private readonly partitionDays: number;
  /** The time partitions as this node last listed them (a hint: inserts still cope with one gone). */
  private knownPartitions: TimePartition[] = [];

  private constructor(settings: PostgresStoreOptions) {
    this.clock = settings.clock ?? systemClock;
    this.pool = openPool(settings);
    this.commitTimeoutMs = settings.commitTimeoutMs ?? COMMIT_TIMEOUT_MS;
    this.partitionDays = settings.partitionDays ?? DEFAULT_PARTITION_DAYS;
    this.databaseClock = new ClockOffset(async () => (await this.pool.query<{ now: number }>(DATABASE_CLOCK_MS)).rows[0]!.now);
    this.outbox = new OutboxQueries(this.pool, this.databaseClock);
    this.quarantined = new QuarantineQueries(this.outbox);
    this.events = new EventQueries(this.pool);
    this.admin = new AdminQueries(this.pool, this.databaseClock);
    this.ruleSetsAndCopies = new RuleSetAndCopyQueries(this.pool);
    this.copy = new CopyQueries(this.pool, this.databaseClock);
    this.nodes = new NodeQueries(this.pool, this.databaseClock);
    this.outages = new OutageQueries(this.pool, this.databaseClock);
    this.shared = new SharedQueries(this.pool, this.databaseClock);
    this.newEvents = new NewEventQueries(this.pool);
    const groupOptions = { failsEveryItem: isStoreWideError, isRetryable };
    // Every commit costs the shared database a WAL flush: with several nodes each taking part of the load,
    // gathering keeps their batches about as large as one node's would be (see docs/scaling.md).
    // A webhook waits for its commit at most commitTimeoutMs, queueing included: a database that cannot be
    // reached (no reset, so no error) or a table lock held by someone else costs a 503, never a hung sender.
    this.saveGroup = new PostgresGroupCommit((batch, timeLeftMs) => this.partitioned(batch.map((e) => e.receivedAt), () =>
      saveEvents(this.pool, batch, (receivedAt, delayMs) => this.databaseClock.toDatabase(receivedAt) + delayMs, timeLeftMs)), {
      ...groupOptions,
      gatherMs: settings.commitIntervalMs ?? 0,
      deadlineMs: this.commitTimeoutMs,
      deadlineError: (waitedMs) => commitTimeoutError(waitedMs),
    });
    this.attemptGroup = new PostgresGroupCommit((records) => this.outbox.recordAttempts(records, this.clock.now()), groupOptions);
  }

  /** Connects, applies the migrations this build has (refusing a newer schema), and starts listening. */
  static async open(settings: PostgresStoreOptions): Promise<PostgresStore> {
    const store = new PostgresStore(settings);
    try {
      const client = await store.pool.connect();
      let failure: Error | undefined;
      try {
        await migrate(client);
      } catch (err) {
        failure = err as Error;
        throw err;
      } finally {
        client.release(failure);
      }
      // After the migration's connection is back: creating partitions takes one of its own (a pool may hold one).
      await ensurePartitionsAhead(store.pool, store.clock.now(), store.partitionDays);
      store.knownPartitions = await listPartitions(store.pool);
      await store.databaseClock.measure();
      if (settings.notifications) {
        const handlers = new Map([[DUE_CHANNEL, () => store.due.notify()], [EVENTS_CHANNEL, () => store.stored.notify()]]);
        store.notifications = new NodeNotifications(clientConfig(settings), store.nodeId, handlers);
        store.dueAnnouncer = new Announcer(store.pool, DUE_CHANNEL, store.nodeId, DUE_ANNOUNCE_GAP_MS);
        store.eventsAnnouncer = new Announcer(store.pool, EVENTS_CHANNEL, store.nodeId, EVENTS_ANNOUNCE_GAP_MS);
        await store.notifications.start();
      }
    } catch (err) {
      await store.close();
      throw err instanceof HookrelayError ? err : asStoreError(err);
    }
    return store;
  }

  private ensureOpen(): void {
    if (this.closed) throw new HookrelayError('store_unavailable', 'The event store is closed.');
  }

  /** A write outside the group commits: any failure is a 503. */
  private async write<T>(fn: () => Promise<T>): Promise<T> {
    this.ensureOpen();
    try {
      return await fn();
    } catch (err) {
      throw asStoreError(err);
    }
  }

  private async read<T>(fn: () => Promise<T>): Promise<T> {
    this.ensureOpen();
    try {
      return await fn();
    } catch (err) {
      throw asReadError(err);
    }
  }

  /**
   * Runs `fn` in one transaction on one connection. A connection that failed (lost, or a query given up on
   * at its deadline, still running as far as the client knows) is thrown away, not rolled back: a ROLLBACK
   * would only wait for the same deadline again.
   */
  private transaction<T>(fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    return this.write(async () => {
      const client = await this.pool.connect();
      let broken: Error | undefined;
      try {
        await client.query('BEGIN');
        const result = await fn(client);
        await client.query('COMMIT');
        return result;
      } catch (err) {
        if (isStoreWideError(err)) broken = err as Error;
        else {
          await client.query('ROLLBACK').catch((rollbackError: unknown) => {
            broken = rollbackError as Error;
          });
        }
        throw err;
      } finally {
        client.release(broken);
      }
    });
  }

  /**
   * Runs a write that stores events written at `times`: should a partition for one be missing (none created
   * ahead yet, or a copy of old events), it is created and the write runs again, so inserts never fail for
   * lack of a partition.
   */
  private async partitioned<T>(times: readonly number[], write: () => Promise<T>): Promise<T> {
    // Known ranges first: a failed insert would have taken ids from the sequences for nothing.
    if (times.some((t) => !this.knownPartitions.some((p) => p.from <= t && t < p.to))) await this.createPartitions(times);
    try {
      return await write();
    } catch (err) {
      // A range another node dropped since this one listed them.
      if (!isMissingPartition(err)) throw err;
      await this.createPartitions(times);
      return write();
    }
  }

  private async createPartitions(times: readonly number[]): Promise<void> {
    await createPartitions(this.pool, times, this.partitionDays);
    this.knownPartitions = await listPartitions(this.pool);
  }

  /** Tells this node's workers at once, and the other nodes through NOTIFY. */
  private deliveriesDue(): void {
    this.due.notify();
    if (!this.closed) this.dueAnnouncer?.announce();
  }

  /** Wakes this node's event streams at once, and the other nodes' through NOTIFY. */
  private eventsStored(): void {
    this.stored.notify();
    if (!this.closed) this.eventsAnnouncer?.announce();
  }

  onDeliveriesDue(listener: () => void): () => void {
    return this.due.add(listener);
  }

  onEventsStored(listener: () => void): () => void {
    const remove = this.stored.add(listener);
    this.streamPoll ??= setInterval(() => {
      if (!this.notifications?.listening) this.stored.notify();
    }, STREAM_POLL_MS).unref();
    return () => {
      remove();
      if (this.stored.size === 0 && this.streamPoll) {
        clearInterval(this.streamPoll);
        this.streamPoll = null;
      }
    };
  }

  streamPosition(start: StreamStart): Promise<StreamPosition> {
    return this.read(() => this.newEvents.streamPosition(start));
  }

  readNewEvents<B extends boolean>(filter: EventSearch, after: StreamPosition, limit: number, withBodies: B): Promise<NewEvents<NewEventRead<B>>> {
    return this.read(() => this.newEvents.read(filter, after, limit, withBodies));
  }

  readEventsToLearn(after: StreamPosition, limit: number): Promise<NewEvents<EventToLearn>> {
    return this.read(() => this.newEvents.readToLearn(after, limit));
  }

  async saveEvent(event: NewEvent): Promise<SaveEventResult> {
    this.ensureOpen();
    let result: SaveEventResult;
    try {
      result = await this.saveGroup.submit(event);
    } catch (err) {
      throw asStoreError(err);
    }
    if (!result.duplicate) this.eventsStored();
    if (!result.duplicate && leavesDeliveriesPending(event.deliveries)) this.deliveriesDue();
    return result;
  }

  getEvent(id: number): Promise<StoredEvent | null> {
    return this.read(() => this.events.get(id));
  }

  getEventHeaders(eventId: number): Promise<Record<string, string> | null> {
    return this.read(() => this.events.headers(eventId));
  }

  claimDueDeliveries(options: { limit: number; leaseMs: number }): Promise<ClaimedDelivery[]> {
    return this.write(() => this.outbox.claim(this.clock.now(), options.limit, options.leaseMs));
  }

  async recordAttempt(deliveryId: number, leaseToken: string, attempt: AttemptRecord, resolution: AttemptResolution): Promise<boolean> {
    this.ensureOpen();
    try {
      return await this.attemptGroup.submit({ deliveryId, leaseToken, attempt, resolution });
    } catch (err) {
      throw asStoreError(err);
    }
  }

  saveRenderedBody(deliveryId: number, leaseToken: string, rendered: { body: Buffer; contentType: string }): Promise<boolean> {
    return this.write(() => this.outbox.saveRenderedBody(deliveryId, leaseToken, rendered, this.clock.now()));
  }

  releaseDelivery(deliveryId: number, leaseToken: string, nextAttemptAt: number): Promise<void> {
    return this.write(() => this.outbox.release(deliveryId, leaseToken, nextAttemptAt));
  }

  nextDueAt(): Promise<number | null> {
    return this.read(() => this.outbox.nextDueAt(this.clock.now()));
  }

  renewLease(deliveryId: number, leaseToken: string, options: { leaseMs: number }): Promise<boolean> {
    return this.write(() => this.outbox.renewLease(deliveryId, leaseToken, options.leaseMs));
  }

  listBlockedKeys(ruleId: string, limit: number): Promise<BlockedKey[]> {
    return this.read(() => this.outbox.blockedKeys(ruleId, limit, this.clock.now()));
  }

  blockedKeyCounts(): Promise<Map<string, number>> {
    return this.read(() => this.outbox.blockedKeyCounts(this.clock.now()));
  }

  getDelivery(id: number): Promise<DeliveryDetail | null> {
    return this.read(async () => {
      const delivery = await this.outbox.get(id);
      return delivery && { ...delivery, redrives: await this.outages.redrivesOfDelivery(id) };
    });
  }

  listDeliveries(filter: DeliveryFilter, page: { limit: number; before?: number }): Promise<Page<Delivery>> {
    return this.read(() => this.outbox.list(filter, page));
  }

  async createDeliveries(eventId: number, deliveries: NewDelivery[], origin: DeliveryOrigin): Promise<number[]> {
    const ids = await this.write(() => this.outbox.insert(this.pool, deliveries.map((delivery) => ({ eventId, delivery })), origin, this.clock.now()));
    if (leavesDeliveriesPending(deliveries)) this.deliveriesDue();
    return ids;
  }

  async releaseEvent(eventId: number, release: QuarantineRelease, routed: { ruleSetHash: string; deliveries: NewDelivery[] }): Promise<ReleaseOutcome> {
    const outcome = await this.transaction((client) => this.quarantined.releaseEvent(client, eventId, release, routed));
    if (outcome.released && leavesDeliveriesPending(routed.deliveries)) this.deliveriesDue();
    return outcome;
  }

  countHeldEvents(limit: number): Promise<number> {
    return this.read(() => this.quarantined.countHeld(this.pool, limit));
  }

  async retryDelivery(id: number): Promise<boolean> {
    const retried = await this.write(() => this.outbox.retryNow(id, this.clock.now()));
    if (retried) this.deliveriesDue();
    return retried;
  }

  outboxStats(): Promise<OutboxStats> {
    return this.read(() => this.outbox.stats(this.clock.now()));
  }

  saveRuleSet(ruleSet: KeptRuleSet): Promise<void> {
    return this.write(() => this.ruleSetsAndCopies.saveRuleSet(ruleSet));
  }

  getRuleSet(hash: string): Promise<KeptRuleSet | null> {
    return this.read(() => this.ruleSetsAndCopies.getRuleSet(hash));
  }

  async saveEditedCopy(copy: NewEditedCopy): Promise<number> {
    const deliveries = copy.deliveries ?? [];
    const id = await this.partitioned([copy.editedAt], () => this.transaction(async (client) => {
      const copyId = await this.ruleSetsAndCopies.insertEditedCopy(client, copy);
      await this.outbox.insert(client, deliveries.map((delivery) => ({ eventId: copyId, delivery })), 'replay', copy.editedAt);
      return copyId;
    }));
    this.eventsStored();
    if (leavesDeliveriesPending(deliveries)) this.deliveriesDue();
    return id;
  }

  async checkWritable(): Promise<void> {
    await this.write(() => this.pool.query(withDeadline({ text: PROBE_COMMIT, values: [this.clock.now()] }, this.commitTimeoutMs)));
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.streamPoll) clearInterval(this.streamPoll);
    // Let anything already queued commit before the connections go away.
    await Promise.all([this.saveGroup.idle(), this.attemptGroup.idle()]);
    await this.notifications?.close();
    await this.pool.end();
  }

  pruneEventsOlderThan(storedBefore: number, limit: number, options: { leaveToPartitions?: boolean } = {}): Promise<number> {
    if (!options.leaveToPartitions) return this.write(() => this.events.pruneOlderThan(storedBefore, limit));
    return this.write(async () => this.events.pruneOutOfPlace(storedBefore, limit, await listPartitions(this.pool)));
  }

  maintainPartitions(plan: PartitionPlan): Promise<PartitionReport> {
    return this.write(async () => {
      const report = await maintainPartitions(this.pool, { ...plan, days: this.partitionDays });
      this.knownPartitions = await listPartitions(this.pool);
      return report;
    });
  }

  pruneOldestEvents(limit: number): Promise<number> {
    return this.write(() => this.events.pruneOldest(limit));
  }

  pruneSeenKeys(seenBefore: number, limit: number): Promise<number> {
    return this.write(() => this.events.pruneSeenKeys(seenBefore, limit));
  }

  backfillSeenKeys(limit: number): Promise<number> {
    return this.write(() => this.events.backfillSeenKeys(limit));
  }

  findSeenKey(key: { source: string; event: string; transferId: string }): Promise<SeenKeyRecord | null> {
    return this.read(() => this.events.findSeenKey(key));
  }

  /** PostgreSQL's autovacuum makes deleted rows' space reusable by itself; there are no pages to give back here. */
  async reclaimFreePages(_maxPages: number): Promise<number> {
    this.ensureOpen();
    return 0;
  }

  countEvents(selection: EventSelection): Promise<number> {
    return this.read(() => this.events.count(selection));
  }

  listEventsForExport(selection: EventSelection, limit: number): Promise<StoredEvent[]> {
    return this.read(() => this.events.listFull(selection, limit));
  }

  listEventBodies(selection: EventSelection, limit: number): Promise<EventBody[]> {
    return this.read(() => this.events.listBodies(selection, limit));
  }

  firstEventIdReceivedFrom(receivedFrom: number): Promise<number | null> {
    return this.read(() => this.events.firstIdReceivedFrom(receivedFrom));
  }

  async importEvents(events: ImportedEvent[], options: ImportOptions = {}): Promise<ImportResult> {
    const importedAt = options.importedAt === undefined ? this.clock.now() : options.importedAt;
    const times = events.map((e) => writtenAt(e.receivedAt, importedAt));
    const result = await this.partitioned(times, () => this.transaction((client) => this.events.importAll(client, events, importedAt)));
    if (result.imported > 0) this.eventsStored();
    return result;
  }

  async createDeliveriesForEvents(batch: { eventId: number; deliveries: NewDelivery[] }[], origin: DeliveryOrigin): Promise<number> {
    const rows = batch.flatMap((item) => item.deliveries.map((delivery) => ({ eventId: item.eventId, delivery })));
    const ids = await this.write(() => this.outbox.insert(this.pool, rows, origin, this.clock.now()));
    if (batch.some((item) => leavesDeliveriesPending(item.deliveries))) this.deliveriesDue();
    return ids.length;
  }

  countDeadDeliveries(filter: BulkDeliveryFilter): Promise<number> {
    return this.read(() => this.admin.countDead(filter));
  }

  countDeadDeliveriesByRule(filter: BulkDeliveryFilter): Promise<Map<string, number>> {
    return this.read(() => this.admin.countDeadByRule(filter));
  }

  async retryDeadDeliveries(filter: BulkDeliveryFilter, limit: number): Promise<number[]> {
    const ids = await this.transaction((client) => this.admin.retryDead(client, filter, limit, this.clock.now()));
    if (ids.length > 0) this.deliveriesDue();
    return ids;
  }

  listEvents(search: EventSearch, page: { limit: number; after?: EventPosition }): Promise<EventPage> {
    return this.read(() => this.events.list(search, page));
  }

  deliveryCountsByRule(ruleIds: readonly string[]): Promise<Map<string, DeliveryCounts>> {
    return this.read(() => this.admin.deliveryCountsByRule(ruleIds));
  }

  deliveryCountsByEvent(eventIds: readonly number[]): Promise<Map<number, DeliveryCounts>> {
    return this.read(() => this.admin.deliveryCountsByEvent(eventIds));
  }

  createJob(job: NewJob): Promise<Job> {
    return this.write(() => this.admin.createJob(job));
  }

  getJob(id: number): Promise<Job | null> {
    return this.read(() => this.admin.getJob(id));
  }

  listJobs(limit: number): Promise<Job[]> {
    return this.read(() => this.admin.listJobs(limit));
  }

  updateJobProgress(id: number, progress: JobProgress): Promise<void> {
    return this.write(() => this.admin.updateJobProgress(id, progress));
  }

  finishJob(id: number, state: Exclude<JobState, 'running'>, error: string | null): Promise<boolean> {
    return this.write(() => this.admin.finishJob(id, state, error, this.clock.now()));
  }

  failOrphanedJobs(error: string): Promise<number> {
    return this.write(() => this.nodes.failOrphanedJobs(error, this.clock.now()));
  }

  registerNode(node: NewNode): Promise<void> {
    return this.write(() => this.nodes.registerNode(node));
  }

  heartbeatNode(id: string, ruleSetHash: string | null): Promise<boolean> {
    return this.write(() => this.nodes.heartbeatNode(id, ruleSetHash));
  }

  deregisterNode(id: string): Promise<void> {
    return this.write(() => this.nodes.deregisterNode(id));
  }

  listLiveNodes(): Promise<ClusterNode[]> {
    return this.read(() => this.nodes.listLiveNodes());
  }

  listGoneNodes(limit: number): Promise<GoneNode[]> {
    return this.read(() => this.nodes.listGoneNodes(limit));
  }

  acquireLease(name: string, holder: string, ttlMs: number): Promise<boolean> {
    return this.write(() => this.nodes.acquireLease(name, holder, ttlMs));
  }

  releaseLease(name: string, holder: string): Promise<void> {
    return this.write(() => this.nodes.releaseLease(name, holder));
  }

  copyExtent(): Promise<CopyExtent> {
    return this.read(() => this.copy.extent());
  }

  readCopyRows<T extends CopyTable>(table: T, after: CopyKey<T> | null, limit: number): Promise<CopyRows[T][]> {
    return this.read(() => this.copy.read(table, after, limit));
  }

  async writeCopyRows<T extends CopyTable>(table: T, rows: CopyRows[T][]): Promise<number> {
    const times = table === 'events' ? (rows as StoredEvent[]).map((e) => writtenAt(e.receivedAt, e.importedAt)) : [];
    const added = await this.partitioned(times, () => this.transaction((client) => this.copy.write(client, table, rows)));
    if (added > 0 && table === 'events') this.stored.notify();
    return added;
  }

  openOutage(destination: string, openedAt: number): Promise<{ outage: Outage; opened: boolean }> {
    return this.transaction((client) => this.outages.open(client, destination, openedAt));
  }

  listOutages(filter: { open?: boolean; limit: number }): Promise<Outage[]> {
    return this.read(() => this.outages.list(filter));
  }

  async closeOutage(destination: string, spacing: RedriveSpacing): Promise<{ outage: Outage; redriven: number[] } | null> {
    const closed = await this.transaction((client) => this.outages.close(client, destination, this.clock.now(), spacing));
    if (closed && closed.redriven.length > 0) this.deliveriesDue();
    return closed;
  }

  async probeOutage(outageId: number, options: { minIntervalMs: number; ruleIds: readonly string[] }): Promise<number | null> {
    const id = await this.transaction((client) => this.outages.probe(client, outageId, this.clock.now(), options.minIntervalMs, options.ruleIds));
    if (id !== null) this.deliveriesDue();
    return id;
  }

  claimSetting(name: string, value: string): Promise<string> {
    return this.write(() => this.shared.claimSetting(name, value, this.clock.now()));
  }

  getSetting(name: string): Promise<string | null> {
    return this.read(() => this.shared.getSetting(name));
  }

  saveConsoleSession(session: ConsoleSession, keep: number): Promise<void> {
    return this.transaction((client) => this.shared.saveSession(client, session, keep, this.clock.now()));
  }

  getConsoleSession(idHash: string): Promise<ConsoleSession | null> {
    return this.read(() => this.shared.getSession(idHash, this.clock.now()));
  }

  deleteConsoleSession(idHash: string): Promise<void> {
    return this.write(() => this.shared.deleteSession(idHash));
  }

  // Observed schemas and drifts: their SQL lives in schema-queries.ts.
  private schemaSql?: SchemaQueries;

  private get schemas(): SchemaQueries {
    return (this.schemaSql ??= new SchemaQueries(this.pool));
  }

  loadSchemaLearning(): Promise<SchemaLearning | null> {
    return this.read(() => this.schemas.load());
  }

  saveSchemaLearning(save: SchemaLearningSave): Promise<{ saved: boolean; drifts: StoredDrift[] }> {
    return this.transaction((client) => this.schemas.saveLearning(client, save));
  }

  restartSchemaLearning(): Promise<number> {
    return this.transaction((client) => this.schemas.restartLearning(client, this.clock.now()));
  }

  listObservedSchemas(filter: { source?: string; event?: string }): Promise<ObservedSchema[]> {
    return this.read(() => this.schemas.list(filter));
  }

  listDrifts(filter: DriftFilter): Promise<StoredDrift[]> {
    return this.read(() => this.schemas.drifts(filter));
  }
}

/** The answer to a webhook whose commit did not complete in time. */
function commitTimeoutError(waitedMs: number): HookrelayError {
  return new HookrelayError(
    'store_unavailable',
    `The event store did not commit within ${waitedMs} ms. Retry later: an event that was stored after all is answered as a duplicate.`,
    { postgres: 'timeout' },
  );
}
