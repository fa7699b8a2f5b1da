import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { DestinationView } from '../delivery/destination-limiter.js';
import type { IngestOutcome } from '../ingest/ingest-handler.js';
import type { DeliveryState, OutboxStats } from '../store/outbox-store.js';
import { MAX_DESTINATION_LABELS, eventLabeller, sourceLabeller } from './label-values.js';

/** The quarantine gauge stops counting here, so a scrape stays cheap when a sender's bug holds millions. */
export const HELD_EVENTS_COUNTED = 100_000;

type DestinationsSource = () => Promise<readonly Pick<DestinationView, 'destination' | 'limit' | 'inFlight'>[]>;

export interface MetricsOptions {
  /** Configured source names (anything else is labelled `_other`). */
  sources: Iterable<string>;
  /** Event names with a schema: always their own label value. */
  knownEvents: Iterable<string>;
  /** Other event names that get their own label value before the rest are counted as `_other`. */
  maxEventLabels: number;
  /** Read on every scrape for the outbox gauges. */
  outboxStats: () => Promise<OutboxStats>;
  /** Blocked order keys per ordered rule that has any (the store's `blockedKeyCounts`). */
  blockedKeyCounts?: () => Promise<Map<string, number>>;
  /** Ids of today's ordered rules: each gets a series, 0 when none of its keys is blocked. */
  orderedRules?: () => string[];
  /** Read on every scrape: dead letters of each current rule. */
  deadLettersByRule?: () => Promise<Map<string, number>>;
  /** Read on every scrape: destinations with an open outage (any node's circuit opened, none has seen a success since). */
  failingDestinations?: () => Promise<string[]>;
  /** Read on every scrape: bytes of webhook bodies held now (the ingest buffer budget). */
  bufferedBytes?: () => number;
  /** Read on every scrape: events held in quarantine now, counted up to `limit`. */
  heldEvents?: (limit: number) => Promise<number>;
  now?: () => number;
}

export interface AttemptObservation {
  ruleId: string;
  outcome: DeliveryState;
  durationMs: number;
}

export interface PruneObservation {
  byAge: number;
  byCount: number;
}

const INGEST_BUCKETS_S = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];
const ATTEMPT_BUCKETS_S = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/**
 * Every hookrelay metric in its own registry (several instances can share one process, as in tests).
 * Counters are fed by callbacks from ingest, the delivery loop, the rule watcher and retention; the
 * outbox gauges are read from the store when scraped, so they are never stale.
 */
export class HookrelayMetrics {
  readonly registry = new Registry();
  private readonly now: () => number;
  private readonly sourceLabel: (source: string) => string;
  private readonly eventLabel: (event: string | null) => string;
  private readonly eventsReceived;
  private readonly ingestDuration;
  private readonly attempts;
  private readonly attemptDuration;
  private readonly outboxPending;
  private readonly outboxDue;
  private readonly oldestDueAge;
  private readonly deadLetters;
  private readonly rulesReloads;
  private readonly rulesReloadErrors;
  private readonly deliveryThreadRestarts;
  private readonly retentionPruned;
  private readonly retentionLastRun;
  private readonly blockedKeys;
  private readonly destinationLimit;
  private readonly destinationInFlight;
  private readonly ruleDeadLetters;
  private readonly destinationFailing;
  private readonly connectionsDropped;
  private readonly schemaDrifts;

  /** Read on every scrape for the per-destination gauges; none on a node that does not deliver. */
  private destinations: DestinationsSource | null = null;

  constructor(private readonly options: MetricsOptions) {
    this.now = options.now ?? Date.now;
    this.sourceLabel = sourceLabeller(options.sources);
    this.eventLabel = eventLabeller(options.knownEvents, options.maxEventLabels);
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });

    this.eventsReceived = new Counter({
      name: 'hookrelay_events_received_total',
      help: 'Webhook requests answered, by source, event name and outcome (stored, duplicate, or the refusal error code).',
      labelNames: ['source', 'event', 'outcome'] as const,
      registers,
    });
    this.ingestDuration = new Histogram({
      name: 'hookrelay_ingest_duration_seconds',
      help: 'Time from request start to answer on POST /webhooks/:source (accepted includes the durable commit).',
      labelNames: ['source', 'result'] as const,
      buckets: INGEST_BUCKETS_S,
      registers,
    });
    this.attempts = new Counter({
      name: 'hookrelay_delivery_attempts_total',
      help: 'Delivery attempts, by rule and outcome: the state each left its delivery in (delivered, pending for another attempt, dead).',
      labelNames: ['rule', 'outcome'] as const,
      registers,
    });
    this.attemptDuration = new Histogram({
      name: 'hookrelay_delivery_attempt_duration_seconds',
      help: 'Duration of delivery attempts (request sent to response read, or failure), by rule.',
      labelNames: ['rule'] as const,
      buckets: ATTEMPT_BUCKETS_S,
      registers,
    });
    this.outboxPending = new Gauge({ name: 'hookrelay_outbox_pending', help: 'Deliveries waiting for an attempt (due now or later).', registers });
    this.outboxDue = new Gauge({ name: 'hookrelay_outbox_due', help: 'Pending deliveries whose next attempt is due now.', registers });
    this.oldestDueAge = new Gauge({ name: 'hookrelay_outbox_oldest_due_age_seconds', help: 'How long the oldest due delivery has been waiting (0 when none is due).', registers });
    this.deadLetters = new Gauge({ name: 'hookrelay_dead_letters', help: 'Dead-lettered deliveries currently stored.', registers });
    this.rulesReloads = new Counter({ name: 'hookrelay_rules_reloads_total', help: 'Rule-set reloads that replaced the rules in use.', registers });
    this.rulesReloadErrors = new Counter({ name: 'hookrelay_rules_reload_errors_total', help: 'Rule-file changes rejected (the last good rules stayed in use).', registers });
    this.deliveryThreadRestarts = new Counter({ name: 'hookrelay_delivery_thread_restarts_total', help: 'Times the delivery thread died and was started again.', registers });
    this.retentionPruned = new Counter({
      name: 'hookrelay_retention_pruned_events_total',
      help: 'Events deleted by retention (with their deliveries and attempts), by reason (age, count).',
      labelNames: ['reason'] as const,
      registers,
    });
    this.schemaDrifts = new Counter({
      name: 'hookrelay_schema_drifts_total',
      help: 'Drifts of the body shape recorded (each once, by the node that learned it), by source, event name (bounded like events_received) and kind.',
      labelNames: ['source', 'event', 'kind'] as const,
      registers,
    });
    this.retentionLastRun = new Gauge({ name: 'hookrelay_retention_last_run_timestamp_seconds', help: 'Unix time the last completed retention pass finished.', registers });
    this.blockedKeys = new Gauge({
      name: 'hookrelay_ordered_keys_blocked',
      help: 'Order keys of an ordered rule whose head has failed and is still pending (later deliveries of the key wait), by rule.',
      labelNames: ['rule'] as const,
      registers,
    });
    this.destinationLimit = new Gauge({
      name: 'hookrelay_destination_concurrency_limit',
      help: 'Attempts this node lets be in flight at once to a destination origin now (adapts between 1 and the ceiling).',
      labelNames: ['destination'] as const,
      registers,
    });
    this.destinationInFlight = new Gauge({
      name: 'hookrelay_destination_in_flight',
      help: 'Attempts in flight to a destination origin from this node now.',
      labelNames: ['destination'] as const,
      registers,
    });
    this.ruleDeadLetters = new Gauge({ name: 'hookrelay_rule_dead_letters', help: 'Dead-lettered deliveries currently stored, by rule (the rules in use).', labelNames: ['rule'] as const, registers });
    const bufferedBytes = options.bufferedBytes;
    if (bufferedBytes) {
      new Gauge({
        name: 'hookrelay_ingest_buffered_bytes',
        help: 'Bytes of webhook bodies held now over every request in flight (reserved by Content-Length before reading); capped by server.maxBufferedBytes.',
        registers,
        collect() {
          this.set(bufferedBytes());
        },
      });
    }
    const heldEvents = options.heldEvents;
    if (heldEvents) {
      new Gauge({
        name: 'hookrelay_quarantined_events',
        help: `Events held in quarantine now, waiting for a release (counted up to ${HELD_EVENTS_COUNTED}).`,
        registers,
        async collect() {
          try {
            this.set(await heldEvents(HELD_EVENTS_COUNTED));
          } catch {
            // Store unavailable: the series keeps its last value; readiness reports the store itself.
          }
        },
      });
    }
    this.connectionsDropped = new Counter({
      name: 'hookrelay_connections_dropped_total',
      help: 'Connections closed unanswered as soon as accepted, because server.maxConnections were open on their listener.',
      registers,
    });
    this.destinationFailing = new Gauge({
      name: 'hookrelay_destination_failing',
      help: 'Destination origins with an open outage (1): a circuit opened and no success has been seen since, on any node.',
      labelNames: ['destination'] as const,
      registers,
    });
  }

  /** The ingest handler's `onOutcome` hook. */
  recordSchemaDrift(drift: { source: string; event: string; kind: string }): void {
    this.schemaDrifts.inc({ source: this.sourceLabel(drift.source), event: this.eventLabel(drift.event), kind: drift.kind });
  }

  recordIngest(outcome: IngestOutcome): void {
    const source = this.sourceLabel(outcome.source);
    const accepted = outcome.code === 'stored' || outcome.code === 'duplicate';
    this.eventsReceived.inc({ source, event: accepted ? this.eventLabel(outcome.event) : this.eventLabel(null), outcome: outcome.code });
    this.ingestDuration.observe({ source, result: accepted ? 'accepted' : 'refused' }, outcome.durationMs / 1000);
  }

  /** The delivery loop's `onAttempt` hook. */
  recordAttempt(attempt: AttemptObservation): void {
    this.attempts.inc({ rule: attempt.ruleId, outcome: attempt.outcome });
    this.attemptDuration.observe({ rule: attempt.ruleId }, attempt.durationMs / 1000);
  }

  /** The server's `onConnectionDropped` hook. */
  recordConnectionDropped(): void {
    this.connectionsDropped.inc();
  }

  recordRulesReload(): void {
    this.rulesReloads.inc();
  }

  recordDeliveryThreadRestart(): void {
    this.deliveryThreadRestarts.inc();
  }

  recordRulesReloadError(): void {
    this.rulesReloadErrors.inc();
  }

  recordPrune(pruned: PruneObservation): void {
    if (pruned.byAge > 0) this.retentionPruned.inc({ reason: 'age' }, pruned.byAge);
    if (pruned.byCount > 0) this.retentionPruned.inc({ reason: 'count' }, pruned.byCount);
    this.retentionLastRun.set(this.now() / 1000);
  }

  /** The exposition text, with the outbox gauges read from the store just now. */
  async scrape(): Promise<string> {
    try {
      const stats = await this.options.outboxStats();
      this.outboxPending.set(stats.pending);
      this.outboxDue.set(stats.due);
      this.oldestDueAge.set(stats.oldestDueAgeMs / 1000);
      this.deadLetters.set(stats.dead);
    } catch {
      // Store unavailable (closing, locked): serve the other metrics; readiness reports the store itself.
    }
    await this.readBlockedKeys();
    await this.readDestinations();
    await this.readDeadLettersAndOutages();
    return this.registry.metrics();
  }

  /** Set afresh on each scrape, so a recovered destination's or removed rule's series disappears. */
  private async readDeadLettersAndOutages(): Promise<void> {
    try {
      const [byRule, failing] = await Promise.all([this.options.deadLettersByRule?.(), this.options.failingDestinations?.()]);
      this.ruleDeadLetters.reset();
      for (const [rule, dead] of byRule ?? []) this.ruleDeadLetters.set({ rule }, dead);
      this.destinationFailing.reset();
      for (const destination of (failing ?? []).slice(0, MAX_DESTINATION_LABELS)) this.destinationFailing.set({ destination }, 1);
    } catch {
      // Store unavailable: as for the outbox gauges.
    }
  }

  /** Per rule, never per key (keys are unbounded); set afresh so a rule whose keys all moved on shows 0, not a stale count. */
  private async readBlockedKeys(): Promise<void> {
    if (!this.options.blockedKeyCounts) return;
    try {
      const counts = await this.options.blockedKeyCounts();
      this.blockedKeys.reset();
      for (const rule of this.options.orderedRules?.() ?? []) this.blockedKeys.set({ rule }, 0);
      for (const [rule, count] of counts) this.blockedKeys.set({ rule }, count);
    } catch {
      // Store unavailable: as for the outbox gauges.
    }
  }

  /** The delivery loop's limiter, read on every scrape for the per-destination gauges. */
  readDestinationsFrom(source: DestinationsSource): void {
    this.destinations = source;
  }

  /** Set afresh on each scrape, so a forgotten destination's series disappears. */
  private async readDestinations(): Promise<void> {
    if (!this.destinations) return;
    // Null while the delivery thread is restarting: no destination series on this scrape.
    const views = await this.destinations().catch(() => null);
    if (!views) return;
    this.destinationLimit.reset();
    this.destinationInFlight.reset();
    for (const view of views.slice(0, MAX_DESTINATION_LABELS)) {
      this.destinationLimit.set({ destination: view.destination }, view.limit);
      this.destinationInFlight.set({ destination: view.destination }, view.inFlight);
    }
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}
