/**
 * The one interface every module uses to reach stored data. SQLite (one process) and PostgreSQL (any number
 * of nodes) implement it; both pass the contract suite in test/contract/store-contract.ts. Times cross it in
 * the caller's clock (unix ms); a backend may keep its own clock inside (PostgreSQL: the database's).
 */

/** `invalid`: an edited copy its operator stored on purpose although it fails the event schema. */
export type Validation = 'valid' | 'unrecognised' | 'invalid';

export interface NewEvent {
  source: string;
  event: string;
  /** `result.id` of the body: with source and event, the idempotency key. */
  transferId: string;
  checkoutId: string | null;
  email: string | null;
  walletAddress: string | null;
  /** `result.totalPriceUsd` of the body when it is a finite number; absent or null: none. */
  totalPriceUsd?: number | null;
  validation: Validation;
  receivedAt: number;
  headers: Record<string, string>;
  body: Buffer;
  /** The rule set that routed it (planned its deliveries): what `original` replay routing uses. */
  ruleSetHash?: string | null;
  /** Outbox rows for the rules that matched; written in the same transaction, only if the event is new. */
  deliveries?: NewDelivery[];
}

/** The front end an edited copy was made through. */
export type EditVia = 'console' | 'cli' | 'api';

/** What makes an event an edited copy: never changed afterwards, never a duplicate of its original. */
export interface EventEdit {
  /** The stored event it was edited from (it may since have been pruned by retention). */
  editedFrom: number;
  editedAt: number;
  via: EditVia;
  /** 1, 2, ... among the copies of one transfer (0 is the received event): part of the idempotency key. */
  number: number;
}

/** An operator's edit of a stored event, stored as a new event with its deliveries, in one transaction. */
export interface NewEditedCopy extends Omit<NewEvent, 'receivedAt'> {
  editedFrom: number;
  editedAt: number;
  via: EditVia;
}

/** Whether a kept rule set came from the rule files, or is a single destination an operator sent an edited event to. */
export type RuleSetKind = 'loaded' | 'one-off';

/**
 * A rule set as kept by its hash, so any node can send a delivery with the rule version it was planned with.
 * `rules` are the rules as written in their files (`${ENV}` references unresolved, literal secrets left
 * out), opaque to the store: it keeps and returns them as JSON.
 */
export interface KeptRuleSet {
  hash: string;
  kind: RuleSetKind;
  rules: unknown[];
  /** When this hash was first kept; saving it again keeps the first time. */
  firstLoadedAt: number;
}

export type DeliveryState = 'pending' | 'delivered' | 'dead';
export type DeliveryOrigin = 'ingest' | 'replay';

export interface NewDelivery {
  ruleId: string;
  ruleSetHash: string;
  /** Transformed body; null = forward the event's raw bytes untouched. */
  body: Buffer | null;
  contentType: string;
  /** Delay before the first attempt (the rule's first schedule step). */
  delayMs?: number;
  /** Set when the delivery can never succeed (a transform failed): stored dead-lettered. */
  deadReason?: string;
  /**
   * An ordered rule's key value: the store gives the row the next sequence number of its (rule, key), and
   * claims it only once no earlier row of that key is pending. Absent: unordered.
   */
  orderKey?: string;
}

export interface Delivery {
  id: number;
  eventId: number;
  ruleId: string;
  ruleSetHash: string;
  origin: DeliveryOrigin;
  state: DeliveryState;
  contentType: string;
  attempts: number;
  nextAttemptAt: number | null;
  lastStatus: number | null;
  lastError: string | null;
  deadReason: string | null;
  /** An ordered rule's key value; null: unordered. */
  orderKey: string | null;
  createdAt: number;
  updatedAt: number;
}

/** A key of an ordered rule whose head has failed and is still pending: every later delivery of the key waits. */
export interface BlockedKey {
  key: string;
  head: {
    deliveryId: number;
    eventId: number;
    attempts: number;
    /** When the head's first failed attempt started. */
    blockedSince: number;
    nextAttemptAt: number | null;
    lastStatus: number | null;
    lastError: string | null;
  };
  /** Pending deliveries of the key behind the head. */
  waiting: number;
}

/**
 * A delivery the worker holds a lease on: only what an attempt needs (claiming is the worker's hot path;
 * the rest of the row is for the admin views, through `getDelivery`).
 */
export interface ClaimedDelivery {
  id: number;
  eventId: number;
  ruleId: string;
  /** The rule set it was planned with: the worker sends it with that version of its rule. */
  ruleSetHash: string;
  contentType: string;
  /** Attempts made before this one. */
  attempts: number;
  /** Attempts made before the current pass of the rule's retry schedule (a redrive starts a new pass). */
  passOffset: number;
  leaseToken: string;
  /** An ordered rule's key value; null: unordered. */
  orderKey: string | null;
  /** When a retryable failure first left it pending (how long it has blocked its key, if ordered); null before. */
  blockedSince: number | null;
  /** What to send: the delivery's own body (a rendered transform), or the event's raw bytes. */
  payload: Buffer;
  /** Whether `payload` is the delivery's own body; false: the event's bytes, which a rule with a transform renders first. */
  hasBody: boolean;
}

export interface AttemptRecord {
  attempt: number;
  startedAt: number;
  durationMs: number;
  urlOrigin: string;
  status: number | null;
  errorCode: string | null;
  errorMessage: string | null;
  responseExcerpt: string | null;
  /** The state the attempt left the delivery in. */
  outcome: DeliveryState;
}

export interface StoredAttempt extends AttemptRecord {
  id: number;
  deliveryId: number;
}

export type AttemptResolution =
  | { state: 'delivered' }
  | { state: 'pending'; nextAttemptAt: number }
  /** `retryable`: retries ran out on failures worth retrying (network, timeout, 408/425/429/5xx): a redrive may send it again. */
  | { state: 'dead'; reason: string; retryable?: boolean };

export interface DeliveryDetail extends Delivery {
  attemptLog: StoredAttempt[];
  /** Each time it was sent again after dying during an outage, oldest first. */
  redrives: DeliveryRedrive[];
}

/** A destination's outage: from the first failed attempt of the run that opened its circuit to the success that closed it. */
export interface Outage {
  id: number;
  /** scheme://host:port, as attempts record it. */
  destination: string;
  openedAt: number;
  /** Null while the destination is still failing. */
  closedAt: number | null;
  /** When a dead letter was last sent again as a probe. */
  lastProbeAt: number | null;
  /** Dead letters sent again because of it (probes included). */
  redriven: number;
}

/** `redrive`: sent again when its outage closed; `probe`: sent again to find out whether the destination recovered. */
export type RedriveKind = 'redrive' | 'probe';

export interface DeliveryRedrive {
  outageId: number;
  kind: RedriveKind;
  redrivenAt: number;
  /** When its new pass of the retry schedule started (redrives are spread out at the rule's rate). */
  dueAt: number;
}

/**
 * Which dead letters of an outage a redrive sends again: those of the rules named (the rules that opted in),
 * each rule's spaced this many ms apart. Others stay dead.
 */
export type RedriveSpacing = ReadonlyMap<string, number>;

export interface OutboxStats {
  pending: number;
  due: number;
  dead: number;
  /** Age (ms) of the oldest due pending delivery; 0 when none is due. */
  oldestDueAgeMs: number;
}

export interface DeliveryFilter {
  state?: DeliveryState;
  ruleId?: string;
  eventId?: number;
}

/**
 * The most times one event is counted as received: PostgreSQL's `integer`. A repeat beyond it is still
 * answered as a duplicate; the count stays there.
 */
export const MAX_RECEIVED_COUNT = 2_147_483_647;

export interface SaveEventResult {
  id: number;
  duplicate: boolean;
  /** How many times this event has been received, counting this one. */
  receivedCount: number;
}

export interface StoredEvent extends Omit<NewEvent, 'receivedAt'> {
  id: number;
  /** Null for a body without a finite `result.totalPriceUsd`, and for a row a node of an earlier version stored. */
  totalPriceUsd: number | null;
  receivedAt: number;
  lastReceivedAt: number;
  receivedCount: number;
  /** When `events import` stored it (its retention age counts from then); null for a webhook received here. */
  importedAt: number | null;
  ruleSetHash: string | null;
  /** Set for an edited copy; null for a received (or imported) event. */
  edit: EventEdit | null;
}

/** An event as rules see it (replay): no headers, no parsed columns. */
export type EventBody = Pick<StoredEvent, 'id' | 'source' | 'event' | 'body' | 'ruleSetHash'>;

export type EventSummary = Omit<StoredEvent, 'body' | 'headers' | 'importedAt' | 'ruleSetHash'> & { bodyBytes: number };

export interface EventFilter {
  event?: string;
  source?: string;
  checkoutId?: string;
  email?: string;
  walletAddress?: string;
  transferId?: string;
  validation?: Validation;
  receivedFrom?: number;
  receivedTo?: number;
}

export interface Page<T> {
  items: T[];
  /** Pass as `before` to get the next (older) page; null when this is the last page. */
  nextCursor: number | null;
}

/**
 * Where a reader of newly stored events stands in the store's commit order: every event at or before it has
 * been read (or passed over by a filter), every event committed later comes after it. SQLite commits ids in
 * increasing order, so the id alone says it (`tx` null). On PostgreSQL ids are taken when a row is written,
 * not when its transaction commits, so the position is `(tx, id)`: the writing transaction (xid8, as text)
 * and the id; `id` 0 stands before every event of that transaction.
 */
export interface StreamPosition {
  tx: string | null;
  id: number;
}

/** Where a reader starts: after the events committed so far, after one event, or with those received since a time. */
export type StreamStart = { now: true } | { afterEventId: number } | { receivedFrom: number };

/** A newly stored event as a stream sends it: its summary and when it was imported. */
export interface NewEventSummary extends EventSummary {
  importedAt: number | null;
}

/** The same with the headers and exact bytes, read only when asked for (they are most of a row). */
export interface NewEventWithBody extends NewEventSummary {
  headers: Record<string, string>;
  body: Buffer;
}

export interface NewEvents<E extends NewEventSummary = NewEventSummary> {
  /** In commit order, each after `after`; at most `limit`. */
  events: E[];
  /** Where the next read starts: past these events and past every committed event the filter left out. */
  position: StreamPosition;
  /**
   * True when events committed beyond `position` cannot be read yet because a transaction older than theirs is
   * still open (PostgreSQL): read again shortly, nobody will announce it. Always false on SQLite.
   */
  heldBack: boolean;
}

/** Reading newly stored events in commit order: event streams and `hookrelay listen`. */
export interface NewEventReader {
  streamPosition(start: StreamStart): Promise<StreamPosition>;
  /**
   * Up to `limit` events matching `filter` committed after `after`, in commit order; never one twice across
   * reads that pass each answer's `position` to the next, never one skipped, even one that committed late.
   */
  readNewEvents<B extends boolean>(filter: EventSearch, after: StreamPosition, limit: number, withBodies: B): Promise<NewEvents<NewEventRead<B>>>;
}

/** What `readNewEvents` returns per event: with headers and body only when read `withBodies`. */
export type NewEventRead<B extends boolean> = B extends true ? NewEventWithBody : NewEventSummary;

export interface Store extends NewEventReader {
  /** Stores the event once; resolves only after the transaction holding it has committed. */
  saveEvent(event: NewEvent): Promise<SaveEventResult>;
  getEvent(id: number): Promise<StoredEvent | null>;
  /**
   * Newest first, keyset-paginated from `after` (the last item of the previous page); ordered by receipt
   * time when a time range is given, by id otherwise. Every filter is served by an index, at any depth.
   */
  listEvents(filter: EventSearch, page: { limit: number; after?: EventPosition }): Promise<EventPage>;
  /** Leases up to `limit` due pending deliveries until `now + leaseMs`. */
  claimDueDeliveries(options: { now: number; limit: number; leaseMs: number }): Promise<ClaimedDelivery[]>;
  /** Appends the attempt and moves the delivery on, if the lease is still ours (else a no-op: false). */
  recordAttempt(deliveryId: number, leaseToken: string, attempt: AttemptRecord, resolution: AttemptResolution): Promise<boolean>;
  /**
   * Keeps the body a claimed delivery's transform rendered, if the lease is still ours (else a no-op: false):
   * every later attempt sends these bytes.
   */
  saveRenderedBody(deliveryId: number, leaseToken: string, rendered: { body: Buffer; contentType: string }): Promise<boolean>;
  /** Gives a claimed delivery back without an attempt (destination busy or paused), due again at `nextAttemptAt`. */
  releaseDelivery(deliveryId: number, leaseToken: string, nextAttemptAt: number): Promise<void>;
  /** When the next pending delivery falls due (unix ms), or null if none is pending; rows waiting behind their key's head do not count. */
  nextDueAt(): Promise<number | null>;
  /**
   * Moves the end of a live lease to `leaseMs` from now (PostgreSQL: the database's now); false when the
   * lease is no longer this token's (it ran out and another claim took the row, or the row was settled).
   */
  renewLease(deliveryId: number, leaseToken: string, options: { now: number; leaseMs: number }): Promise<boolean>;
  /** The blocked keys of an ordered rule, longest blocked first. */
  listBlockedKeys(ruleId: string, limit: number): Promise<BlockedKey[]>;
  /** How many keys are blocked, per ordered rule that has any. */
  blockedKeyCounts(): Promise<Map<string, number>>;
  /**
   * Calls `listener` after a commit made deliveries due (ingest, replay, retry): on this process, and on
   * PostgreSQL on any node (LISTEN/NOTIFY, when available). Idle workers wake on it instead of at their next
   * poll. Returns the function that stops the calls.
   */
  onDeliveriesDue(listener: () => void): () => void;
  getDelivery(id: number): Promise<DeliveryDetail | null>;
  listDeliveries(filter: DeliveryFilter, page: { limit: number; before?: number }): Promise<Page<Delivery>>;
  /** New outbox rows for a stored event (replay through the current rules). */
  createDeliveries(eventId: number, deliveries: NewDelivery[], origin: DeliveryOrigin): Promise<number[]>;
  /**
   * Makes a delivered or dead delivery pending and due now; false if it is already pending or missing. An
   * ordered rule's delivery joins the back of its key (as do bulk retries).
   */
  retryDelivery(id: number, now: number): Promise<boolean>;
  outboxStats(now: number): Promise<OutboxStats>;
  /**
   * Calls `listener` after a commit that stored new events (ingest, import, edited copy; repeats do not
   * count): in this process, and on PostgreSQL on any node (LISTEN/NOTIFY, else a poll every second). Readers
   * then read with `readNewEvents`; the store stays the source of truth. Returns the unsubscribe.
   */
  onEventsStored(listener: () => void): () => void;
  /** Keeps a rule set by its hash; a hash already kept is left as it is. Resolves after the commit. */
  saveRuleSet(ruleSet: KeptRuleSet): Promise<void>;
  getRuleSet(hash: string): Promise<KeptRuleSet | null>;
  /** Stores an edited copy (next edit number of its transfer) and its deliveries in one transaction; returns its id. */
  saveEditedCopy(copy: NewEditedCopy): Promise<number>;
  /** Throws `store_unavailable` unless a write can commit right now. */
  checkWritable(): Promise<void>;
  close(): Promise<void>;

  // Retention: each call is one short transaction; events with a pending delivery are never deleted.
  /**
   * Deletes up to `limit` of the oldest events stored before `storedBefore` (received before it, and for an
   * imported event also imported before it); returns how many.
   */
  pruneEventsOlderThan(storedBefore: number, limit: number): Promise<number>;
  /** Deletes up to `limit` of the oldest events; returns how many. */
  pruneOldestEvents(limit: number): Promise<number>;
  /** Gives up to `maxPages` free database pages back to the file system; returns the free pages left. */
  reclaimFreePages(maxPages: number): Promise<number>;

  // Export, import and bulk operations (CLI).
  countEvents(selection: EventSelection): Promise<number>;
  /** Whole events (raw bytes and headers), oldest first; page on with `afterId`. */
  listEventsForExport(selection: EventSelection, limit: number): Promise<StoredEvent[]>;
  /** What rules read of events (id, source, event name, raw bytes), oldest first; page on with `afterId`. */
  listEventBodies(selection: EventSelection, limit: number): Promise<EventBody[]>;
  /** The lowest id of the events received at or after `receivedFrom` (null: none): where a time-range walk in id order starts. */
  firstEventIdReceivedFrom(receivedFrom: number): Promise<number | null>;
  /** Stores events not already present (same key as ingest), in one transaction; creates no deliveries. */
  importEvents(events: ImportedEvent[], options?: ImportOptions): Promise<ImportResult>;
  /** Replay of many events in one transaction: the outbox rows for each event; returns how many rows. */
  createDeliveriesForEvents(batch: { eventId: number; deliveries: NewDelivery[] }[], origin: DeliveryOrigin): Promise<number>;
  countDeadDeliveries(filter: BulkDeliveryFilter): Promise<number>;
  /** Dead deliveries matching `filter`, counted per rule id. */
  countDeadDeliveriesByRule(filter: BulkDeliveryFilter): Promise<Map<string, number>>;
  /** Makes up to `limit` matching dead deliveries (ascending id) pending and due at `now`, in one transaction; returns their ids. */
  retryDeadDeliveries(filter: BulkDeliveryFilter, limit: number, now: number): Promise<number[]>;

  // Admin API.
  /** Deliveries per state of each rule (zeros for a rule without any). */
  deliveryCountsByRule(ruleIds: readonly string[]): Promise<Map<string, DeliveryCounts>>;
  /** Deliveries per state of each event (zeros for an event without any), for a page of a list: one query for all. */
  deliveryCountsByEvent(eventIds: readonly number[]): Promise<Map<number, DeliveryCounts>>;
  createJob(job: NewJob): Promise<Job>;
  getJob(id: number): Promise<Job | null>;
  /** Newest first. */
  listJobs(limit: number): Promise<Job[]>;
  /** Records a running job's counters (absolute values). */
  updateJobProgress(id: number, progress: JobProgress): Promise<void>;
  /** Moves a running job to a final state; false when it was not running any more (cancelled meanwhile). */
  finishJob(id: number, state: Exclude<JobState, 'running'>, error: string | null, now: number): Promise<boolean>;
  /**
   * Marks failed every running job whose node is no longer live (stopped heartbeating, deregistered, or
   * never recorded): a restart or a crash interrupted it. Jobs of live nodes are left alone. Returns how many.
   */
  failOrphanedJobs(error: string, now: number): Promise<number>;

  // Copying a whole store to another (`hookrelay store copy`): rows keep their ids.
  /** Rows and highest id of each table a copy moves: where a copy stands, and where a resumed one carries on. */
  copyExtent(): Promise<CopyExtent>;
  /** Up to `limit` rows of `table` after `after` (an id; a hash for rule sets), ascending, with every column. */
  readCopyRows<T extends CopyTable>(table: T, after: CopyKey<T> | null, limit: number): Promise<CopyRows[T][]>;
  /**
   * Writes rows read from another store, ids kept, in one transaction: a new id is inserted; an id already
   * there with the same identity (see CopyRows) takes the row's changing columns (states, counters); any
   * other row under a given id or idempotency key fails the whole batch with `store_copy_conflict`. Ids
   * handed out later (ingest, replay) start above the highest id written. Returns how many rows were new.
   */
  writeCopyRows<T extends CopyTable>(table: T, rows: CopyRows[T][]): Promise<number>;

  // The node registry (cluster view) and leases (work one node does at a time). Heartbeat times are the
  // store's clock (PostgreSQL: the database's), returned in the caller's.
  /** Records this node as live from now; an id already registered is replaced. Forgets nodes silent for a day. */
  registerNode(node: NewNode): Promise<void>;
  /** Refreshes the node's heartbeat and rule-set hash; false when its row is gone (register again). */
  heartbeatNode(id: string, ruleSetHash: string | null): Promise<boolean>;
  /**
   * Marks the node as left (clean shutdown): no longer live from now, so its jobs are orphaned at once. Its
   * row stays, saying when it left, until it is forgotten with the nodes silent for a day.
   */
  deregisterNode(id: string): Promise<void>;
  /** The live nodes: last heartbeat younger than NODE_MISSED_HEARTBEATS of their own intervals; oldest first. */
  listLiveNodes(): Promise<ClusterNode[]>;
  /** Up to `limit` nodes still registered that are not live (left, or missing since their last heartbeat), most recent first. */
  listGoneNodes(limit: number): Promise<GoneNode[]>;
  /**
   * Takes or renews the lease `name` for `holder` until `ttlMs` from now: true when `holder` holds it
   * afterwards (it was free, expired, or already its own), false when another holder's lease is running.
   */
  acquireLease(name: string, holder: string, ttlMs: number): Promise<boolean>;
  /** Gives the lease back if `holder` holds it. */
  releaseLease(name: string, holder: string): Promise<void>;

  // Outages and redrive (src/delivery/redrive.ts).
  /** Records that `destination` is failing since `openedAt`, unless it already has an open outage; `opened` says whether this call did. */
  openOutage(destination: string, openedAt: number): Promise<{ outage: Outage; opened: boolean }>;
  /** Newest first; `open` keeps only the outages not yet closed. */
  listOutages(filter: { open?: boolean; limit: number }): Promise<Outage[]>;
  /**
   * Closes the destination's open outage and, in the same transaction, makes the dead letters that died of
   * retryable failures at it since the outage opened pending again (oldest first, spaced per rule, with a
   * new pass of the retry schedule). Null when it has no open outage (another node closed it): exactly one
   * caller redrives.
   */
  closeOutage(destination: string, closedAt: number, spacing: RedriveSpacing): Promise<{ outage: Outage; redriven: number[] } | null>;
  /**
   * Sends the oldest such dead letter of an open outage again, due now, unless a probe was sent less than
   * `minIntervalMs` ago (by any node); returns its id, or null.
   */
  probeOutage(outageId: number, now: number, options: { minIntervalMs: number; ruleIds: readonly string[] }): Promise<number | null>;

  // What every node shares without configuration: generated values and console sessions.
  /**
   * Stores `value` under `name` unless a value is stored there already; returns the stored value. The first
   * writer wins, also between nodes that start at the same moment, so all of them end up with one value.
   */
  claimSetting(name: string, value: string, now: number): Promise<string>;
  /** The value stored under `name`, or null. */
  getSetting(name: string): Promise<string | null>;
  /**
   * Starts a console session; in the same transaction deletes the expired ones and, beyond the `keep`
   * newest, the oldest (a flood of log-ins cannot grow the table without bound).
   */
  saveConsoleSession(session: ConsoleSession, keep: number, now: number): Promise<void>;
  /** The session with this id hash, unless it has expired by `now`. */
  getConsoleSession(idHash: string, now: number): Promise<ConsoleSession | null>;
  /** Ends a session (log-out, or a new log-in from the same browser); a missing one is no error. */
  deleteConsoleSession(idHash: string): Promise<void>;
}

/** A node is live until this many of its heartbeat intervals pass without a heartbeat. */
export const NODE_MISSED_HEARTBEATS = 3;

/** What a `hookrelay serve` process runs: `all` receives and delivers, `receiver` only receives, `worker` only delivers. */
export type NodeRole = 'receiver' | 'worker' | 'all';

export interface NewNode {
  /** Random per process start. */
  id: string;
  host: string;
  pid: number;
  role: NodeRole;
  version: string;
  ruleSetHash: string | null;
  /** How often this node heartbeats: with NODE_MISSED_HEARTBEATS, how long it stays live without one. */
  heartbeatMs: number;
  startedAt: number;
  /** Base URL of its admin API once it listens; kept by PostgreSQL (SQLite's node is found by its runtime file). */
  url?: string | null;
}

export interface ClusterNode extends NewNode {
  lastHeartbeat: number;
}

/**
 * A registered node that is not live. `left`: it stopped cleanly at `since`; otherwise it went silent: its
 * last heartbeat was at `since` (killed, crashed, or cut off from the database).
 */
export interface GoneNode extends Omit<ClusterNode, 'heartbeatMs' | 'lastHeartbeat'> {
  left: boolean;
  since: number;
}

/** A console log-in as stored: the sha256 of the cookie's session id, never the id itself. */
export interface ConsoleSession {
  idHash: string;
  /** The session's CSRF token, which mutations made with the session must echo. */
  csrf: string;
  expiresAt: number;
}

/** The admin list filter: the event filter plus "has at least one delivery in this state". */
export interface EventSearch extends EventFilter {
  deliveryState?: DeliveryState;
}

/** Where a page of events ended: its last item's id and receipt time. */
export interface EventPosition {
  id: number;
  receivedAt: number;
}

export interface EventPage {
  items: EventSummary[];
  /** Pass as `after` for the next (older) page; null when this is the last page. */
  next: EventPosition | null;
}

/** How many deliveries are in each state. */
export interface DeliveryCounts {
  pending: number;
  delivered: number;
  dead: number;
}


export type JobKind = 'replay' | 'retry';
export type JobState = 'running' | 'done' | 'cancelled' | 'failed';

export interface JobProgress {
  total: number;
  processed: number;
  created: number;
  failed: number;
  /** What the job found beyond its counters (a bulk replay's plan per rule), as JSON; kept as given. */
  summary?: Record<string, unknown> | null;
}

export interface NewJob {
  kind: JobKind;
  /** The filter the job was started with, kept for display. */
  filter: Record<string, unknown>;
  ruleId: string | null;
  total: number;
  startedAt: number;
  /** The node running it (null: recorded before nodes had ids). */
  nodeId: string | null;
}

export interface Job extends NewJob, JobProgress {
  id: number;
  state: JobState;
  finishedAt: number | null;
  error: string | null;
}

/** Filters of the CLI and bulk operations: the list filter, plus an id lower bound and a delivery state. */
export interface EventSelection extends EventFilter {
  /** Only events with an id greater than this (paging, or resuming an interrupted bulk operation). */
  afterId?: number;
  /** Only events with an id up to this one (a bulk operation leaves out events that arrive while it runs). */
  throughId?: number;
  /** Only events with at least one delivery in this state. */
  deliveryState?: DeliveryState;
}

/** Dead-lettered deliveries to retry: by rule, by event, or by anything about their events. */
export interface BulkDeliveryFilter extends EventFilter {
  ruleId?: string;
  eventId?: number;
  /** Only deliveries with an id greater than this. */
  afterId?: number;
  /**
   * Today's rule ids. With it, only the deliveries today's rules still send: of one of these rules, or
   * planned by a one-off rule set (an edited event sent to a URL, sent as kept). With `removed: true`, only
   * the others: those the worker dead-letters as "rule removed".
   */
  todaysRules?: { ids: readonly string[]; removed?: boolean };
}

export interface ImportOptions {
  /**
   * When retention starts counting the events' age: now by default, so an import of old events is not
   * pruned at the next pass; null keeps the age of their receipt time (a restore of this store's own events).
   */
  importedAt?: number | null;
}

/** An event as exported: everything stored about it except its id (a new one is given on import). */
export interface ImportedEvent extends Omit<NewEvent, 'deliveries'> {
  lastReceivedAt: number;
  receivedCount: number;
  /** An edited copy keeps its edit (its `editedFrom` names an id of the exporting store). */
  edit?: EventEdit | null;
}

export interface ImportResult {
  imported: number;
  duplicates: number;
}

/** A delivery with every column a copy moves: its transformed body and whether a worker held it. */
export interface CopiedDelivery extends Delivery {
  body: Buffer | null;
  /** Set while an attempt ran; a copy writes the row lease-free. */
  leaseToken: string | null;
  /** An ordered row's place within its key (null: unordered). */
  orderSeq: number | null;
  /** When the row first failed as the head of its key. */
  blockedSince: number | null;
  /** Attempts made before the current pass of the retry schedule. */
  passOffset: number;
  /** The destination a dead letter died on with retryable failures (what a redrive looks for). */
  retryableDeadDestination: string | null;
}

/** A row of the settings (generated ingest secrets, the admin token): name → value, the first writer's. */
export interface CopiedSetting {
  name: string;
  value: string;
  createdAt: number;
}

/** A row of the redrive history, with what ties it to its delivery. */
export interface CopiedRedrive extends DeliveryRedrive {
  id: number;
  deliveryId: number;
}

/**
 * The tables a copy moves, in the order it moves them (a row's references come before it), and their rows.
 * Identity (what must match when an id is already in the target): a setting's name and value (the first
 * writer's value is the instance's: a different one is a conflict); a rule set's hash; an event's source,
 * event name, transfer id, edit number, receipt time and body; a delivery's event, rule, rule set, origin
 * and creation time; an outage's destination and opening; a redrive's delivery, outage, kind and time; an
 * attempt's delivery, number and start; a job's kind and start.
 */
export interface CopyRows {
  settings: CopiedSetting;
  ruleSets: KeptRuleSet;
  events: StoredEvent;
  deliveries: CopiedDelivery;
  outages: Outage;
  redrives: CopiedRedrive;
  attempts: StoredAttempt;
  jobs: Job;
}

export type CopyTable = keyof CopyRows;

export const COPY_TABLES: readonly CopyTable[] = ['settings', 'ruleSets', 'events', 'deliveries', 'outages', 'redrives', 'attempts', 'jobs'];

/** Where a page of a copy ends: a setting's name, a rule set's hash, any other row's id. */
export type CopyKey<T extends CopyTable> = T extends 'ruleSets' | 'settings' ? string : number;

export interface CopyTableExtent {
  rows: number;
  /** null when the table is empty (settings and rule sets: always null, they are keyed by name and hash). */
  minId: number | null;
  maxId: number | null;
}

export type CopyExtent = Record<CopyTable, CopyTableExtent>;
