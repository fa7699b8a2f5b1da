import { pauseReason } from '../delivery/delivery-pauses.js';
import { destinationKey } from '../delivery/destination-limiter.js';
import type { CompiledRule, RuleSet } from '../rules/types.js';
import type { Outage, OutageStore } from '../store/outage-store.js';
import type { BlockedKey, Delivery, OutboxStore } from '../store/outbox-store.js';
import type { OperationsContext } from './context.js';
import type { DeliveryWaitView, DestinationsView } from './view-schemas.js';

/**
 * Why a pending delivery is not being sent right now, and until when, from state hookrelay already keeps:
 * today's rules, the answering node's destinations (circuit, limit, attempts in flight: in memory, per
 * node), the store's open outages (shared) and the blocked keys of ordered rules (shared).
 */
export interface WaitSources {
  store: OutageStore & OutboxStore;
  /** Today's rules; null when they cannot be read (the CLI with an invalid rules dir). */
  rules: RuleSet | null;
  /** This node's destinations; null where no delivery loop runs (the CLI's local mode, a receiver-only node). */
  destinations: DestinationsView | null;
  /** The answering node, named with facts that are its own (circuit, concurrency). */
  nodeId: string | null;
  now: number;
}

export type DeliveryWaits = (delivery: Delivery) => DeliveryWaitView | null;

/** The wait sources of a running server: its rules, its own destinations (when it delivers) and its node id. */
export async function serverWaitSources(ctx: Pick<OperationsContext, 'store' | 'rules' | 'destinations' | 'node' | 'now'>): Promise<WaitSources> {
  return { store: ctx.store, rules: ctx.rules.current(), destinations: ctx.destinations ? await ctx.destinations() : null, nodeId: ctx.node?.id ?? null, now: ctx.now() };
}

/** Blocked keys looked up per ordered rule: the longest-blocked ones, enough for any page. */
const BLOCKED_KEYS_LIMIT = 500;
const OPEN_OUTAGES_LIMIT = 1_000;
const DUE_SLACK_MS = 1_000;

const iso = (ms: number): string => new Date(ms).toISOString();
const isoOrNull = (ms: number | null | undefined): string | null => (ms === null || ms === undefined ? null : iso(ms));

function scheduleText(ms: readonly number[]): string {
  return ms.map((d) => (d % 3_600_000 === 0 && d > 0 ? `${d / 3_600_000}h` : d % 60_000 === 0 && d > 0 ? `${d / 60_000}m` : `${d / 1000}s`)).join(', ');
}

function originOf(rule: CompiledRule): string | null {
  try {
    return destinationKey(rule.destination.url);
  } catch {
    return null;
  }
}

/** Looks up, once for a page of deliveries, what their waits depend on; then answers per delivery. */
export async function deliveryWaits(sources: WaitSources, deliveries: readonly Delivery[]): Promise<DeliveryWaits> {
  const pending = deliveries.filter((d) => d.state === 'pending');
  if (pending.length === 0) return () => null;
  const rules = new Map((sources.rules?.rules ?? []).map((rule) => [rule.id, rule]));
  const outages = new Map<string, Outage>((await sources.store.listOutages({ open: true, limit: OPEN_OUTAGES_LIMIT })).map((o) => [o.destination, o]));
  const blocked = new Map<string, Map<string, BlockedKey>>();
  for (const ruleId of new Set(pending.filter((d) => d.orderKey !== null).map((d) => d.ruleId))) {
    const keys = await sources.store.listBlockedKeys(ruleId, BLOCKED_KEYS_LIMIT);
    blocked.set(ruleId, new Map(keys.map((k) => [k.key, k])));
  }
  const destinations = new Map((sources.destinations?.destinations ?? []).map((d) => [d.destination, d]));
  return (delivery) => (delivery.state === 'pending' ? waitOf(delivery, { ...sources, rules: sources.rules === null ? null : rules, outages, blocked, destinations }) : null);
}

interface Lookups {
  rules: Map<string, CompiledRule> | null;
  outages: Map<string, Outage>;
  blocked: Map<string, Map<string, BlockedKey>>;
  destinations: Map<string, DestinationsView['destinations'][number]>;
  nodeId: string | null;
  now: number;
}

function waitOf(d: Delivery, at: Lookups): DeliveryWaitView {
  const rule = at.rules?.get(d.ruleId);
  const schedule = rule?.retryScheduleMs ?? [];
  // Attempts outside the schedule (before a redrive, a lost connection tried again at once) come before its pass.
  const attempt = { next: d.attempts + 1, of: schedule.length > d.attempts - d.passOffset ? d.passOffset + schedule.length : null };
  const nextAt = isoOrNull(d.nextAttemptAt);
  const wait = (fields: Pick<DeliveryWaitView, 'reason' | 'message'> & Partial<DeliveryWaitView>): DeliveryWaitView => ({
    until: nextAt, since: null, blockedBy: null, node: null, attempt, ...fields,
  });
  if (at.rules === null) return wait({ reason: d.nextAttemptAt !== null && d.nextAttemptAt > at.now ? 'retry_schedule' : 'due', message: 'the rules could not be read: only the next attempt time is known' });
  if (!rule) return wait({ reason: 'rule_removed', message: `rule "${d.ruleId}" is no longer in the rule set: it is dead-lettered when next claimed` });
  const paused = pauseReason(rule);
  if (paused) return wait({ reason: 'rule_disabled', message: paused, until: null });

  const head = d.orderKey === null ? undefined : at.blocked.get(d.ruleId)?.get(d.orderKey)?.head;
  if (head && head.deliveryId !== d.id) {
    return wait({
      reason: 'order_blocked',
      message: `waits behind delivery #${head.deliveryId}, the failing first delivery of its order key "${d.orderKey}": it goes once #${head.deliveryId} is delivered or dead-lettered`,
      until: isoOrNull(head.nextAttemptAt),
      since: iso(head.blockedSince),
      blockedBy: head.deliveryId,
    });
  }

  const origin = originOf(rule);
  const outage = origin === null ? undefined : at.outages.get(origin);
  const here = origin === null ? undefined : at.destinations.get(origin);
  const since = isoOrNull(outage?.openedAt);
  const pausedUntil = here?.pausedUntil ? Date.parse(here.pausedUntil) : null;
  if (pausedUntil !== null && pausedUntil > at.now) {
    return wait({
      reason: 'circuit_open',
      message: `the circuit for ${origin} is open on this node after repeated failures: nothing is attempted there, and no attempt is counted, until it closes; then one attempt probes it`,
      until: here!.pausedUntil,
      since,
      node: at.nodeId,
    });
  }
  // A limited destination's rows are offered again a fraction of a second later: within that, still due.
  const due = d.nextAttemptAt === null || d.nextAttemptAt <= at.now + DUE_SLACK_MS;
  // A later time on a row that has failed, or that no worker has claimed since it was written (every claim
  // sets updated_at), is a schedule step: the first one may delay the first attempt. On any other row it
  // is its lease's end while it waits in a worker for a slot, or its turn at a busy destination.
  const failed = d.lastStatus !== null || d.lastError !== null;
  const neverClaimed = d.attempts === 0 && d.updatedAt === d.createdAt;
  const busy = here !== undefined && here.inFlight >= here.limit;
  if (!due && (failed || neverClaimed || (!busy && rule.rateLimitPerSecond === undefined))) {
    const step = attempt.of === null
      ? `attempt ${attempt.next}, past the retry schedule (${scheduleText(schedule)}): a key kept blocked repeats its last step`
      : `attempt ${attempt.next} of ${attempt.of} on the retry schedule (${scheduleText(schedule)})`;
    // Without this node's circuit (the CLI, a receiver-only node), an open outage says the time may be a pause's end.
    const failing = outage ? `; ${origin} has been failing since the outage opened, and while a node's circuit for it is open its attempts wait for the pause to end` : '';
    return wait({ reason: outage ? 'destination_failing' : 'retry_schedule', message: `${step}${failing}`, since });
  }
  if (busy) {
    return wait({
      reason: 'concurrency',
      until: due ? null : nextAt,
      message: `${origin} has ${here.inFlight} attempts in flight on this node, its limit now (ceiling ${here.ceiling}): it goes when one finishes`,
      node: at.nodeId,
    });
  }
  if (rule.rateLimitPerSecond !== undefined) {
    const when = due ? 'due; ' : 'at its turn; ';
    return wait({ reason: 'rate_limit', until: due ? null : nextAt, message: `${when}rule "${rule.id}" sends at most ${rule.rateLimitPerSecond} per second on each node, so due deliveries go out in turn` });
  }
  return wait({ reason: 'due', message: 'due: the worker sends it at its next claim' });
}
