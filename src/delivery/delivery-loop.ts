import type { Dispatcher } from 'undici';
import type { Logger } from 'pino';
import { InFlightSet } from '../http/in-flight-set.js';
import type { CompiledRule, RuleEventInput, RuleSet } from '../rules/types.js';
import type { AttemptResolution, ClaimedDelivery, DeliveryQueue } from '../store/delivery-queue.js';
import type { EventStore, StoredEvent } from '../store/event-store.js';
import type { EventHeadersStore } from '../store/event-headers-store.js';
import type { DeliveryState } from '../store/outbox-store.js';
import type { CircuitBreaker } from './circuit-breaker.js';
import { sampleOutcome } from './adaptive-limit.js';
import { classifyAttempt, lostConnection } from './classify-attempt.js';
import { deliveryHeaders, forwardedHeaders } from '../signing/delivery-headers.js';
import { destinationKey, type DestinationLimiter } from './destination-limiter.js';
import { sendAttempt, type AttemptResult } from './http-sender.js';
import { nextAttemptDelay } from './retry-schedule.js';
import { RuleVersions } from './rule-versions.js';
import { LeaseKeeper, LeasedAttempt } from './lease-keeper.js';
import { SlotWaiters } from './slot-waiters.js';
import { renderOutcome, type RenderOutcome } from '../rules/render-outcome.js';
import type { RuleSetStore } from '../store/rule-set-store.js';

/** The store roles the worker uses: the outbox's delivery side, events (forwarded headers), rule versions. */
export type DeliveryLoopStore = DeliveryQueue & EventStore & EventHeadersStore & RuleSetStore;

export interface DeliveryLoopOptions {
  store: DeliveryLoopStore;
  rules: () => RuleSet;
  /** The rule version each delivery was planned with (default: versions from `store`, no `${ENV}` values). */
  ruleVersions?: RuleVersions;
  dispatcher: Dispatcher;
  limiter: DestinationLimiter;
  breaker: CircuitBreaker;
  logger: Logger;
  defaultConcurrency: number;
  maxInFlight: number;
  batchSize: number;
  leaseMs: number;
  pollIntervalMs: number;
  /**
   * How long the loop waits, once told of new deliveries or after a claim that left nothing due, before it
   * claims again (default 0): the deliveries that several commits make due meanwhile share one claim and
   * one read, instead of costing a write transaction each.
   */
  claimDelayMs?: number;
  now?: () => number;
  random?: () => number;
  /** Told when a destination's circuit opens for the first time in a run of failures, and of every answer that closes it (redrive, alerts). */
  outages?: OutageListener;
  /** Called after each attempt is recorded (metrics). */
  onAttempt?: (attempt: { ruleId: string; outcome: DeliveryState; durationMs: number }) => void;
}

export interface OutageListener {
  /** The destination's circuit opened; its failures began at `failingSince`. */
  opened(destination: string, failingSince: number, now: number): void;
  /** The destination answered with a verdict of its own (delivered, or a 4xx): it works. */
  answered(destination: string, now: number): void;
}

/**
 * One rule's deliveries waiting for or in their render take at most 1/this of the worker's slots: a rule
 * whose transforms all run to their time limit leaves the rest to other deliveries; its further rows wait
 * like those of a busy destination.
 */
const RENDER_SHARE_OF_SLOTS = 4;
/** Rows waiting in memory for a slot at their destination take at most 1/this of the worker's slots. */
const WAITING_SHARE_OF_SLOTS = 4;
/** How long a row waits when its turn at a busy destination, its circuit's probe or its rule's render share is not known. */
const BUSY_DESTINATION_DELAY_MS = 200;
/** How often a key kept blocked retries its head when the rule's schedule has no later step to repeat. */
const KEEP_BLOCKED_RETRY_MS = 60_000;
/** Disabling a rule pauses its queued deliveries; they are looked at again this often. */
const DISABLED_RULE_RECHECK_MS = 30_000;
/** A failed store call that gives a row back or records its attempt runs again this often, waiting longer each time. */
const BOOKKEEPING_TRIES = 8;
const BOOKKEEPING_RETRY_MS = 250;
const BOOKKEEPING_RETRY_MAX_MS = 5_000;

/**
 * Log level of an attempt's line. Every attempt is in the store's attempt log (admin API, console, CLI) and
 * counted in /metrics, so the log keeps what needs attention: a line per successful attempt would be most
 * of the log under load and costs the worker 10-25 % of its CPU per delivery when it drains an outbox.
 * `HOOKRELAY_LOG_LEVEL=debug` shows them too.
 */
const ATTEMPT_LOG_LEVEL = { delivered: 'debug', pending: 'info', dead: 'warn' } as const;

function blockedTimeoutReason(maxBlockedForMs: number, last: string | null): string {
  return `blocked its order key for longer than ${maxBlockedForMs} ms${last ? ` (last: ${last})` : ''}`;
}

const utf8 = new TextDecoder();

/** What a rule's transform reads of a stored event: ingest parsed the same bytes before storing them. */
function inputOf(event: StoredEvent): RuleEventInput {
  return { source: event.source, event: event.event, body: JSON.parse(utf8.decode(event.body)), raw: event.body };
}

/** The stable id downstream can deduplicate on: the same for every attempt of one delivery. */
export function deliveryIdOf(delivery: { id: number }): string {
  return `dlv_${delivery.id}`;
}

/**
 * Claims due outbox rows in batches with a lease, sends each to its rule's destination and records every
 * attempt. At-least-once: a crash mid-attempt leaves the row leased, and it falls due again when the lease
 * ends. A live attempt renews its lease, so the lease can be shorter than a rule's timeout. Never parses HTTP requests; knows the rules only through `rules()`.
 */
export class DeliveryLoop {
  private readonly now: () => number;
  private readonly random: () => number;
  /** Every attempt until its outcome is recorded (shutdown waits for them). */
  private readonly inFlight = new InFlightSet<Promise<void>>();
  /** Attempts whose HTTP exchange has not ended: what `maxInFlight` bounds. */
  private busySlots = 0;
  /** The leases of the attempts in flight: shutdown aborts them all, a lost lease its own. */
  private readonly leases: LeaseKeeper;
  private aborted = false;
  private stopping = false;
  private wakeUp: (() => void) | null = null;
  /** Set while a wake for new deliveries waits out `claimDelayMs`: later ones join it. */
  private claimTimer: NodeJS.Timeout | undefined;
  private readonly claimDelayMs: number;
  /** The loop sleeps until attempts free enough slots to claim. */
  private waitingForSlots = false;
  private loopDone: Promise<void> | null = null;
  private stopWatching: (() => void) | null = null;
  private rulesById = new Map<string, CompiledRule>();
  /** Each rule's destination key (its URL's origin), parsed at its first attempt after a rule-set load, not at every attempt. */
  private destinations = new Map<string, string>();
  private rulesHash: string | null = null;
  /**
   * Claiming is a write transaction: the loop waits until this many slots are free rather than claiming one
   * row each time one attempt finishes, and attempts wake it only then (not once per finished attempt).
   */
  private readonly claimThreshold: number;
  private readonly ruleVersions: RuleVersions;
  /** Renders waiting or running per rule, and the most one rule may have (see RENDER_SHARE_OF_SLOTS). */
  private readonly rendering = new Map<string, number>();
  private readonly maxRendersPerRule: number;
  /** Rows waiting for a slot at their destination; each keeps its worker slot, so they may take a quarter of them. */
  private readonly slotWaiters: SlotWaiters;

  constructor(private readonly options: DeliveryLoopOptions) {
    this.ruleVersions = options.ruleVersions ?? new RuleVersions(options.store, {});
    this.now = options.now ?? Date.now;
    this.random = options.random ?? Math.random;
    this.claimThreshold = Math.max(1, Math.floor(Math.min(options.batchSize, options.maxInFlight) / 4));
    this.claimDelayMs = options.claimDelayMs ?? 0;
    this.maxRendersPerRule = Math.max(1, Math.floor(options.maxInFlight / RENDER_SHARE_OF_SLOTS));
    this.slotWaiters = new SlotWaiters(Math.floor(options.maxInFlight / WAITING_SHARE_OF_SLOTS));
    this.leases = new LeaseKeeper({
      leaseMs: options.leaseMs,
      now: this.now,
      renew: ({ delivery }) => options.store.renewLease(delivery.id, delivery.leaseToken, { leaseMs: options.leaseMs }),
      onLost: ({ delivery }, reason) =>
        options.logger.warn({ deliveryId: delivery.id, ruleId: delivery.ruleId, reason }, 'delivery attempt abandoned: its lease could not be kept'),
    });
  }

  start(): void {
    // Deliveries made due by any node (PostgreSQL) or this process wake the loop, not only the poll.
    this.stopWatching ??= this.options.store.onDeliveriesDue(() => this.wake());
    this.loopDone ??= this.loop();
  }

  /** New deliveries exist (ingest, replay, retry): look within `claimDelayMs` instead of at the next poll. */
  wake(): void {
    if (this.claimDelayMs === 0) this.wakeNow();
    else
      this.claimTimer ??= setTimeout(() => {
        this.claimTimer = undefined;
        this.wakeNow();
      }, this.claimDelayMs);
  }

  /** Ends the loop's sleep at once (stopping, slots freed). */
  private wakeNow(): void {
    this.wakeUp?.();
  }

  get activeAttempts(): number {
    return this.inFlight.size;
  }

  /** Stops claiming, lets in-flight attempts finish for up to `graceMs`, then aborts the rest (they stay due). */
  async stop(graceMs: number): Promise<void> {
    this.stopping = true;
    this.stopWatching?.();
    clearTimeout(this.claimTimer);
    this.wakeNow();
    await this.loopDone;
    const grace = new Promise<void>((resolve) => setTimeout(resolve, graceMs).unref());
    await Promise.race([Promise.all(this.inFlight), grace]);
    this.aborted = true;
    this.leases.abortAll();
    await Promise.all(this.inFlight);
  }

  private freeSlots(): number {
    return this.options.maxInFlight - this.busySlots;
  }

  private async loop(): Promise<void> {
    // Claim without asking first: after a full batch (more rows are most likely due), and after a sleep that
    // the read before it found rows due by its end.
    let dueNow = false;
    while (!this.stopping) {
      const free = this.freeSlots();
      if (free < this.claimThreshold && this.busySlots > 0) {
        this.waitingForSlots = true;
        await this.sleep(this.options.pollIntervalMs); // woken as soon as enough attempts have finished
        this.waitingForSlots = false;
        continue;
      }
      // A read first: claiming is a write transaction, not worth taking (or waiting for a lock) when nothing is due.
      const untilDue = dueNow ? 0 : await this.delayUntilDue();
      dueNow = false;
      if (untilDue > 0) {
        await this.sleep(untilDue);
        continue;
      }
      const limit = Math.min(free, this.options.batchSize);
      let claimed: ClaimedDelivery[];
      const leaseEnd = this.now() + this.options.leaseMs;
      try {
        claimed = await this.options.store.claimDueDeliveries({ limit, leaseMs: this.options.leaseMs });
      } catch (err) {
        this.options.logger.error({ err }, 'delivery loop could not claim deliveries; retrying');
        await this.sleep(this.options.pollIntervalMs); // the store is failing: back off, never spin
        continue;
      }
      for (const delivery of claimed) this.track(delivery, leaseEnd);
      if (claimed.length === limit) {
        dueNow = true;
        await new Promise((resolve) => setImmediate(resolve)); // more are due: let other work run, then claim again
        continue;
      }
      const nextDue = await this.delayUntilDue();
      dueNow = nextDue <= this.claimDelayMs;
      await this.sleep(Math.max(nextDue, this.claimDelayMs));
    }
  }

  /** How long until the next pending row falls due, capped at the poll interval. */
  private async delayUntilDue(): Promise<number> {
    const due = await this.options.store.nextDueAt().catch(() => null);
    return due === null ? this.options.pollIntervalMs : Math.max(0, Math.min(this.options.pollIntervalMs, due - this.now()));
  }

  /**
   * Waits for `ms` or until `wake()`. Always a timer (at least 1 ms), so the loop yields to I/O on every
   * turn even when rows are due but cannot be taken yet: a loop of resolved promises would starve the
   * event loop (no requests served, no attempts finished).
   */
  private sleep(ms: number): Promise<void> {
    if (this.stopping) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        if (this.wakeUp === done) this.wakeUp = null;
        resolve();
      };
      const timer = setTimeout(done, Math.max(1, ms));
      this.wakeUp = done;
    });
  }

  /**
   * Runs one claimed delivery. Its slot is taken until its HTTP exchange ends, not until its outcome is
   * recorded: the slot is free for the next claim at once, and the claim's transaction records the outcome.
   */
  private track(delivery: ClaimedDelivery, leaseEnd: number): void {
    let holdsSlot = true;
    this.busySlots += 1;
    const freeSlot = (): void => {
      if (!holdsSlot) return;
      holdsSlot = false;
      this.busySlots -= 1;
      // Only a loop waiting for slots: any other sleep ends when rows fall due, and ending it early would
      // cost a read of the outbox per finished attempt.
      if (this.waitingForSlots && this.freeSlots() >= this.claimThreshold) this.wakeNow();
    };
    const attempt = this.attemptWithLease(delivery, leaseEnd, freeSlot);
    const forget = this.inFlight.add(attempt);
    attempt.finally(() => {
      forget();
      freeSlot();
    });
  }

  /** What the worker derives from a rule set, computed once per rule-set load rather than per claim or attempt. */
  private refreshRules(): void {
    const ruleSet = this.options.rules();
    if (ruleSet.hash === this.rulesHash) return;
    this.rulesById = new Map(ruleSet.rules.map((rule) => [rule.id, rule]));
    this.destinations = new Map();
    this.rulesHash = ruleSet.hash;
  }

  private destinationOf(rule: CompiledRule): string {
    // Keyed by URL, not rule id: an older version of a rule may send elsewhere.
    let destination = this.destinations.get(rule.destination.url);
    if (destination === undefined) {
      destination = destinationKey(rule.destination.url);
      this.destinations.set(rule.destination.url, destination);
    }
    return destination;
  }

  private ruleFor(id: string): CompiledRule | undefined {
    this.refreshRules();
    return this.rulesById.get(id);
  }

  /**
   * Runs the attempt while keeping its lease: renewed as it nears its end, and the attempt aborted while
   * the lease still holds if it cannot be (no second attempt of the delivery, or of its key, can overlap).
   */
  private async attemptWithLease(delivery: ClaimedDelivery, leaseEnd: number, freeSlot: () => void): Promise<void> {
    const leased = new LeasedAttempt(delivery, leaseEnd);
    if (this.aborted) leased.abort();
    this.leases.hold(leased);
    try {
      await this.attempt(delivery, leased, freeSlot);
    } finally {
      leased.end();
    }
  }

  /**
   * Renders a delivery's transform in the sandbox, once: the body is kept with the row before it is sent, so
   * every attempt sends the same bytes. A transform that fails or passes a limit dead-letters the delivery
   * (an ordered key moves on to its next delivery). Null when the delivery is settled or its lease lost.
   */
  private async render(delivery: ClaimedDelivery, rule: CompiledRule, leased: LeasedAttempt): Promise<ClaimedDelivery | null> {
    const startedAt = this.now();
    const event = await this.options.store.getEvent(delivery.eventId);
    let outcome: RenderOutcome;
    try {
      if (!event) throw new Error(`event ${delivery.eventId} is no longer stored`);
      outcome = await renderOutcome(rule, inputOf(event));
    } catch (err) {
      outcome = { body: delivery.payload, contentType: delivery.contentType, deadReason: `transform not run: ${(err as Error).message}` };
    }
    if (outcome.deadReason !== undefined) {
      const failure = { durationMs: this.now() - startedAt, responseExcerpt: '', error: { code: 'transform_failed', message: outcome.deadReason } };
      await this.record(delivery, startedAt, '', failure, { state: 'dead', reason: outcome.deadReason }, leased);
      return null;
    }
    const rendered = { body: outcome.body, contentType: outcome.contentType };
    if (!(await this.untilStored(() => this.options.store.saveRenderedBody(delivery.id, delivery.leaseToken, rendered), leased))) return null;
    return { ...delivery, payload: rendered.body, contentType: rendered.contentType, hasBody: true };
  }

  private async attempt(delivery: ClaimedDelivery, leased: LeasedAttempt, freeSlot: () => void): Promise<void> {
    const { store, logger } = this.options;
    const todaysRule = this.ruleFor(delivery.ruleId);
    const now = this.now();
    try {
      const found = this.ruleVersions.lookup(delivery, this.options.rules(), todaysRule);
      const version = found instanceof Promise ? await found : found;
      if (version.action === 'dead') {
        const reason = version.code === 'rule_removed' ? 'rule removed' : version.reason;
        await this.record(delivery, now, '', { durationMs: 0, responseExcerpt: '', error: { code: version.code, message: version.reason } }, { state: 'dead', reason }, leased);
        return;
      }
      if (version.action === 'hold') {
        await this.untilStored(() => store.releaseDelivery(delivery.id, delivery.leaseToken, now + DISABLED_RULE_RECHECK_MS), leased);
        return;
      }
      const { rule } = version;
      const blockedTooLong = this.blockedTimeout(delivery, rule, now);
      if (blockedTooLong) {
        await this.record(delivery, now, '', { durationMs: 0, responseExcerpt: '', error: { code: 'blocked_timeout', message: blockedTooLong } }, { state: 'dead', reason: blockedTooLong }, leased);
        return;
      }
      const destination = this.destinationOf(rule);
      if (this.options.breaker.isOpen(destination, now)) {
        await this.holdForCircuit(delivery, rule, destination, now, leased);
        return;
      }
      if (rule.hasTransform && !delivery.hasBody) {
        // Rendered before the destination's slot is taken: a slow transform holds no slot of its destination.
        const rendering = this.rendering.get(rule.id) ?? 0;
        if (rendering >= this.maxRendersPerRule) {
          await this.untilStored(() => store.releaseDelivery(delivery.id, delivery.leaseToken, now + BUSY_DESTINATION_DELAY_MS * (1 + this.random())), leased);
          return;
        }
        this.rendering.set(rule.id, rendering + 1);
        let rendered: ClaimedDelivery | null;
        try {
          rendered = await this.render(delivery, rule, leased);
        } finally {
          const left = (this.rendering.get(rule.id) ?? 1) - 1;
          if (left > 0) this.rendering.set(rule.id, left);
          else this.rendering.delete(rule.id);
        }
        if (rendered === null) return;
        delivery = rendered;
      }
      const { limiter } = this.options;
      const limits = { concurrency: rule.concurrency ?? this.options.defaultConcurrency, ratePerSecond: rule.rateLimitPerSecond };
      let release = limiter.tryAcquire(destination, limits);
      // At its concurrency limit, a destination's next free slot goes to a row waiting here (a rate has no
      // release to wait for: its rows take turns below).
      const waiting = release || limits.ratePerSecond !== undefined ? null : this.slotWaiters.wait(destination, limiter.rowsWorthHolding(destination, limits), () => limiter.tryAcquire(destination, limits), leased);
      if (waiting) release = await waiting;
      if (!release) {
        // Back at its turn in the destination's line, or soon when that is not known (a head that may block its key only so long, by then).
        const turn = limiter.nextTurn(destination, limits) ?? this.now() + BUSY_DESTINATION_DELAY_MS * (1 + this.random());
        const dueAt = Math.min(turn, this.blockedDeadline(delivery, rule) ?? Infinity);
        await this.untilStored(() => store.releaseDelivery(delivery.id, delivery.leaseToken, dueAt), leased);
        return;
      }
      // After a pause, the first attempt to go is the probe, alone; the others wait for its outcome.
      const pass = this.options.breaker.beginAttempt(destination, this.now());
      if (pass === 'held') {
        release();
        this.slotWaiters.freed(destination);
        await this.holdForCircuit(delivery, rule, destination, this.now(), leased);
        return;
      }
      const startedAt = this.now();
      let result: AttemptResult | undefined;
      let reconnect = false;
      try {
        result = await this.send(delivery, rule, startedAt, leased);
        reconnect = this.reconnects(delivery, result);
      } finally {
        // The exchange is over: its destination and worker slots go to the next attempts while this one is
        // recorded, and its answer adapts the destination's limit (a connection to try again says nothing of its load).
        const outcome = result && !reconnect ? sampleOutcome(result.status, result.error?.code) : null;
        release(outcome && result ? { outcome, durationMs: result.durationMs } : undefined);
        this.slotWaiters.freed(destination);
        freeSlot();
      }
      const finishedAt = this.now();
      const resolution = this.resolve(delivery, rule, result, finishedAt, reconnect);
      const outsideSchedule = resolution.state === 'pending' && resolution.outsideSchedule === true;
      // Only failures a pause can help count against the destination: a refusal by the SSRF guard, a shutdown
      // or a lost connection tried again at once is not the destination's doing; a retryable failure that ran
      // out of retries still is.
      const failed = (resolution.state === 'pending' && result.error?.code !== 'aborted' && !outsideSchedule) || (resolution.state === 'dead' && resolution.retryable === true);
      if (failed) {
        const failingSince = this.options.breaker.recordFailure(destination, finishedAt);
        if (failingSince !== null) this.options.outages?.opened(destination, failingSince, finishedAt);
      } else if (result.status !== undefined) {
        this.options.breaker.recordSuccess(destination);
        this.options.outages?.answered(destination, finishedAt);
      } else if (pass === 'probe') {
        this.options.breaker.probeEnded(destination);
      }
      await this.record(delivery, startedAt, destination, result, resolution, leased);
      if (outsideSchedule) this.wake();
    } catch (err) {
      // The store failed while recording: the lease runs out and the row is attempted again later.
      logger.error({ err, deliveryId: delivery.id }, 'delivery bookkeeping failed; the delivery stays leased and will be retried');
    }
  }

  /**
   * The HTTP exchange: headers, then one attempt within the rule's timeout. Later headers win: the received
   * ones a rule forwards, then the rule's own, then hookrelay's (identity and signature).
   */
  private send(delivery: ClaimedDelivery, rule: CompiledRule, startedAt: number, leased: LeasedAttempt): Promise<AttemptResult> {
    if (rule.destination.forwardHeaders.length === 0) return this.sendWith(delivery, rule, startedAt, leased, undefined);
    // The headers alone: the body is in the claim already, and may be large.
    return this.options.store.getEventHeaders(delivery.eventId).then((received) =>
      this.sendWith(delivery, rule, startedAt, leased, received ? forwardedHeaders(received, rule.destination.forwardHeaders) : undefined));
  }

  private sendWith(delivery: ClaimedDelivery, rule: CompiledRule, startedAt: number, leased: LeasedAttempt, received: Record<string, string> | undefined): Promise<AttemptResult> {
    const headers: Record<string, string> = { 'content-type': delivery.contentType };
    if (received) Object.assign(headers, received);
    Object.assign(headers, rule.destination.headers);
    const identity = { signing: rule.signing, deliveryId: deliveryIdOf(delivery), eventId: delivery.eventId, ruleId: rule.id, timestamp: new Date(startedAt), body: delivery.payload };
    deliveryHeaders(identity, headers);
    return sendAttempt({
      url: rule.destination.url,
      method: rule.destination.method,
      headers,
      body: delivery.payload,
      timeoutMs: rule.timeoutMs,
      dispatcher: this.options.dispatcher,
      abort: leased,
    });
  }

  /**
   * A connection lost before any answer is tried again at once, on a new connection and outside the retry
   * schedule: once per run of such failures, so a destination that resets every connection still backs off.
   */
  private reconnects(delivery: ClaimedDelivery, result: AttemptResult): boolean {
    return result.status === undefined && lostConnection(result.error?.code) && !lostConnection(delivery.lastError);
  }

  private resolve(delivery: ClaimedDelivery, rule: CompiledRule, result: AttemptResult, now: number, reconnect: boolean): AttemptResolution {
    // Shutdown interrupted the attempt: due again at once, for the next start.
    if (result.error?.code === 'aborted') return { state: 'pending', nextAttemptAt: now };
    const classified = classifyAttempt({ status: result.status, headers: result.headers, error: result.error, retryOn: rule.retryOn, now });
    if (classified.verdict === 'delivered') return { state: 'delivered' };
    if (classified.verdict === 'permanent') return { state: 'dead', reason: classified.reason };
    const order = delivery.orderKey === null ? undefined : rule.order;
    const retry = { retryAfterMs: classified.retryAfterMs, random: this.random };
    // A redrive starts a new pass of the schedule: count the attempts of this pass only.
    let delay = nextAttemptDelay({ attemptNumber: delivery.attempts + 1 - delivery.passOffset, scheduleMs: rule.retryScheduleMs, ...retry });
    // A key kept blocked never runs out of retries: the schedule's last step repeats.
    if (delay === null && order?.onBlockedTimeout === 'keep-blocked') delay = nextAttemptDelay({ attemptNumber: 1, scheduleMs: [0, rule.retryScheduleMs.at(-1) || KEEP_BLOCKED_RETRY_MS], ...retry });
    if (delay === null) return { state: 'dead', reason: `retries exhausted after ${delivery.attempts + 1} attempts (last: ${classified.reason})`, retryable: true };
    if (order?.maxBlockedForMs !== undefined && order.onBlockedTimeout === 'dead-letter') {
      // The key may stay blocked this long from the head's first failure: dead-lettered at that time at the latest.
      const deadline = (delivery.blockedSince ?? now) + order.maxBlockedForMs;
      if (now >= deadline) return { state: 'dead', reason: blockedTimeoutReason(order.maxBlockedForMs, classified.reason), retryable: true };
      delay = Math.min(delay, deadline - now);
    }
    // Only where the schedule retries at all: a rule without retries sends nothing twice.
    if (reconnect) return { state: 'pending', nextAttemptAt: now, outsideSchedule: true };
    return { state: 'pending', nextAttemptAt: now + delay };
  }

  /**
   * Gives a row back while its destination's circuit holds it: until the pause ends, or soon while the probe is
   * in flight (a head that may block its key only so long is looked at again by then, even while it stays open).
   */
  private async holdForCircuit(delivery: ClaimedDelivery, rule: CompiledRule, destination: string, now: number, leased: LeasedAttempt): Promise<void> {
    const reopensAt = this.options.breaker.reopensAt(destination, now) ?? now + BUSY_DESTINATION_DELAY_MS * (1 + this.random());
    const dueAt = Math.min(reopensAt, this.blockedDeadline(delivery, rule) ?? Infinity);
    await this.untilStored(() => this.options.store.releaseDelivery(delivery.id, delivery.leaseToken, dueAt), leased);
  }

  /** When a failing head that blocks its key is dead-lettered under the rule's bound; null without one. */
  private blockedDeadline(delivery: ClaimedDelivery, rule: CompiledRule): number | null {
    const order = delivery.orderKey === null ? undefined : rule.order;
    if (order?.maxBlockedForMs === undefined || order.onBlockedTimeout !== 'dead-letter' || delivery.blockedSince === null) return null;
    return delivery.blockedSince + order.maxBlockedForMs;
  }

  /** Why a head that has blocked its key past the rule's bound is dead-lettered without another attempt; null if it has not. */
  private blockedTimeout(delivery: ClaimedDelivery, rule: CompiledRule, now: number): string | null {
    const deadline = this.blockedDeadline(delivery, rule);
    return deadline !== null && now >= deadline ? blockedTimeoutReason(rule.order!.maxBlockedForMs!, null) : null;
  }

  /**
   * Runs a store call that ends this worker's hold on a leased row (giving it back, recording its attempt)
   * again when it fails (a pooled connection not free in time): given up after one failure, the row would
   * stay leased, unsent or unrecorded, until its lease ends (minutes). Tries stop when the attempt is aborted
   * (lease lost, shutdown): the lease then decides.
   */
  private async untilStored<T>(call: () => Promise<T>, leased: LeasedAttempt): Promise<T> {
    for (let tries = 1; ; tries++) {
      try {
        return await call();
      } catch (err) {
        if (leased.aborted || tries >= BOOKKEEPING_TRIES) throw err;
        this.options.logger.warn({ err }, 'delivery bookkeeping failed; trying again');
        await new Promise((resolve) => setTimeout(resolve, Math.min(BOOKKEEPING_RETRY_MAX_MS, BOOKKEEPING_RETRY_MS * 2 ** (tries - 1))));
        if (leased.aborted) throw err;
      }
    }
  }

  private async record(
    delivery: ClaimedDelivery, startedAt: number, destination: string, result: AttemptResult, resolution: AttemptResolution, leased: LeasedAttempt,
  ): Promise<void> {
    const attempt = delivery.attempts + 1;
    const outcome = resolution.state;
    const kept = await this.untilStored(() => this.options.store.recordAttempt(delivery.id, delivery.leaseToken, {
      attempt,
      startedAt,
      durationMs: Math.round(result.durationMs),
      urlOrigin: destination,
      status: result.status ?? null,
      errorCode: result.error?.code ?? null,
      errorMessage: result.error?.message ?? null,
      responseExcerpt: result.responseExcerpt || null,
      outcome,
    }, resolution), leased);
    this.options.onAttempt?.({ ruleId: delivery.ruleId, outcome, durationMs: result.durationMs });
    const level = ATTEMPT_LOG_LEVEL[outcome];
    // Successes are below the default level: do not build their line only for pino to drop it.
    if (!this.options.logger.isLevelEnabled(level)) return;
    this.options.logger[level]({
      deliveryId: delivery.id, eventId: delivery.eventId, ruleId: delivery.ruleId, destination, attempt, status: result.status ?? null,
      outcome, durationMs: Math.round(result.durationMs), error: result.error?.code ?? null, leaseLost: !kept || undefined,
      nextAttemptAt: resolution.state === 'pending' ? new Date(resolution.nextAttemptAt).toISOString() : undefined,
    }, 'delivery attempt');
  }
}
