import type { ClusterNode, GoneNode, NodeRole } from './cluster-store.js';
import type { CopiedDelivery, CopiedRedrive } from './copyable-store.js';
import type { Job, JobState } from './job-store.js';
import type { DeliveryRedrive, Outage } from './outage-store.js';
import type { BlockedKey, Delivery, DeliveryOrigin, StoredAttempt } from './outbox-store.js';
import type { KeptRuleSet } from './rule-set-store.js';

// Rows of the tables both backends share, as their drivers return them, and what the Store hands out.

export interface DeliveryRow {
  id: number;
  event_id: number;
  rule_id: string;
  rule_set_hash: string;
  origin: DeliveryOrigin;
  state: Delivery['state'];
  content_type: string;
  attempts: number;
  next_attempt_at: number | null;
  last_status: number | null;
  last_error: string | null;
  dead_reason: string | null;
  order_key: string | null;
  pass_offset: number;
  created_at: number;
  updated_at: number;
}

export const DELIVERY_COLUMNS = `id, event_id, rule_id, rule_set_hash, origin, state, content_type, attempts, next_attempt_at,
  last_status, last_error, dead_reason, order_key, pass_offset, created_at, updated_at`;

export function toDelivery(row: DeliveryRow): Delivery {
  return {
    id: row.id,
    eventId: row.event_id,
    ruleId: row.rule_id,
    ruleSetHash: row.rule_set_hash,
    origin: row.origin,
    state: row.state,
    contentType: row.content_type,
    attempts: row.attempts,
    nextAttemptAt: row.next_attempt_at,
    lastStatus: row.last_status,
    lastError: row.last_error,
    deadReason: row.dead_reason,
    orderKey: row.order_key,
    passOffset: row.pass_offset,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** The columns of a delivery only a copy reads, besides DELIVERY_COLUMNS. */
export interface CopiedDeliveryColumns {
  body: Buffer | null;
  lease_token: string | null;
  order_seq: number | null;
  blocked_since: number | null;
  retryable_dead_destination: string | null;
}

export const COPIED_DELIVERY_COLUMNS = 'body, lease_token, order_seq, blocked_since, retryable_dead_destination';

/** A delivery with every column a copy moves; `nextAttemptAt` already in the node's clock. */
export function toCopiedDelivery(row: DeliveryRow & CopiedDeliveryColumns, nextAttemptAt: number | null): CopiedDelivery {
  return {
    ...toDelivery(row),
    nextAttemptAt,
    body: row.body,
    leaseToken: row.lease_token,
    orderSeq: row.order_seq,
    blockedSince: row.blocked_since,
    retryableDeadDestination: row.retryable_dead_destination,
  };
}

export interface JobRow {
  id: number;
  kind: Job['kind'];
  state: JobState;
  filter: string;
  rule_id: string | null;
  total: number;
  processed: number;
  created: number;
  failed: number;
  started_at: number;
  finished_at: number | null;
  error: string | null;
  /** JSON text, or null. */
  summary: string | null;
  node_id: string | null;
}

export function toJob(row: JobRow): Job {
  return {
    id: row.id,
    kind: row.kind,
    state: row.state,
    filter: JSON.parse(row.filter) as Record<string, unknown>,
    ruleId: row.rule_id,
    total: row.total,
    processed: row.processed,
    created: row.created,
    failed: row.failed,
    startedAt: row.started_at,
    finishedAt: row.finished_at,
    error: row.error,
    summary: row.summary === null ? null : (JSON.parse(row.summary) as Record<string, unknown>),
    nodeId: row.node_id,
  };
}


export function toStoredAttempt(r: Record<string, unknown>): StoredAttempt {
  return {
    id: r.id as number,
    deliveryId: r.delivery_id as number,
    attempt: r.attempt as number,
    startedAt: r.started_at as number,
    durationMs: r.duration_ms as number,
    urlOrigin: r.url_origin as string,
    status: r.status as number | null,
    errorCode: r.error_code as string | null,
    errorMessage: r.error_message as string | null,
    responseExcerpt: r.response_excerpt as string | null,
    outcome: r.outcome as StoredAttempt['outcome'],
  };
}

export interface NodeRow {
  id: string;
  host: string;
  pid: number;
  role: NodeRole;
  version: string;
  rule_set_hash: string | null;
  heartbeat_ms: number;
  started_at: number;
  last_heartbeat: number;
  /** PostgreSQL only. */
  url?: string | null;
}

/**
 * A node that stopped cleanly keeps its row with heartbeat_ms 0 and last_heartbeat set to when it left:
 * not live by the same test every version applies (last heartbeat + intervals > now), so a version that
 * deletes the row instead and this one agree on which nodes are live during a rolling upgrade.
 */
export const LEFT_HEARTBEAT_MS = 0;

export function toGoneNode(row: NodeRow, toCallerClock: (storeTime: number) => number = (t) => t): GoneNode {
  const { heartbeatMs, lastHeartbeat, ...node } = toClusterNode(row, toCallerClock);
  return { ...node, left: heartbeatMs === LEFT_HEARTBEAT_MS, since: lastHeartbeat };
}

/** A nodes row; `toCallerClock` turns the store's heartbeat time into the caller's. */
export function toClusterNode(row: NodeRow, toCallerClock: (storeTime: number) => number = (t) => t): ClusterNode {
  return {
    id: row.id,
    host: row.host,
    pid: row.pid,
    role: row.role,
    version: row.version,
    ruleSetHash: row.rule_set_hash,
    heartbeatMs: row.heartbeat_ms,
    startedAt: row.started_at,
    lastHeartbeat: toCallerClock(row.last_heartbeat),
    ...(row.url != null && { url: row.url }),
  };
}

export interface OutageRow {
  id: number;
  destination: string;
  opened_at: number;
  closed_at: number | null;
  last_probe_at: number | null;
  redriven: number;
}

export function toOutage(row: OutageRow): Outage {
  return { id: row.id, destination: row.destination, openedAt: row.opened_at, closedAt: row.closed_at, lastProbeAt: row.last_probe_at, redriven: row.redriven };
}

export interface RedriveRow {
  outage_id: number;
  kind: DeliveryRedrive['kind'];
  redriven_at: number;
  due_at: number;
}

export function toDeliveryRedrive(row: RedriveRow): DeliveryRedrive {
  return { outageId: row.outage_id, kind: row.kind, redrivenAt: row.redriven_at, dueAt: row.due_at };
}

export function toCopiedRedrive(row: RedriveRow & { id: number; delivery_id: number }): CopiedRedrive {
  return { id: row.id, deliveryId: row.delivery_id, ...toDeliveryRedrive(row) };
}

/** A blocked key's head as both backends' queries return it. */
export interface BlockedHeadRow {
  order_key: string;
  id: number;
  event_id: number;
  attempts: number;
  blocked_since: number;
  next_attempt_at: number | null;
  last_status: number | null;
  last_error: string | null;
  waiting: number;
}

export function toBlockedKey(row: BlockedHeadRow): BlockedKey {
  return {
    key: row.order_key,
    head: {
      deliveryId: row.id,
      eventId: row.event_id,
      attempts: row.attempts,
      blockedSince: row.blocked_since,
      nextAttemptAt: row.next_attempt_at,
      lastStatus: row.last_status,
      lastError: row.last_error,
    },
    waiting: row.waiting,
  };
}

/** A row of rule_sets, as PostgreSQL answers it. */
export interface RuleSetRow {
  hash: string;
  kind: KeptRuleSet['kind'];
  rules: string;
  first_loaded_at: number;
}

export function toKeptRuleSet(row: RuleSetRow): KeptRuleSet {
  return { hash: row.hash, kind: row.kind, rules: JSON.parse(row.rules) as unknown[], firstLoadedAt: row.first_loaded_at };
}
