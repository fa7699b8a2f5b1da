import { ruleInputOf } from './event-input.js';
import { HookrelayError } from '../errors.js';
import type { RuleSet } from '../rules/types.js';
import type { EventBody } from '../store/event-store.js';
import type { NewDelivery } from '../store/outbox-store.js';
import type { ReplayRouter, RouteMode, Routing } from './replay-routing.js';
import { planRoutedReplay, type PlannedSend } from './routed-replay.js';

/** Sends listed in a bulk replay's summary: enough to check where things go before a real run. */
const SAMPLE_SIZE = 10;

// A type, not an interface: it is stored as a JSON record.
export type BulkReplaySummary = {
  route: RouteMode;
  dryRun: boolean;
  /** Deliveries created (dry run: that would be created) per rule. */
  perRule: Record<string, number>;
  /** Matching rules not sent per rule (removed or disabled today, or not compilable here). */
  withheld: Record<string, number>;
  /** Events stored before rule sets were kept: original routing unknown, nothing replayed (use route current). */
  unknownRouting: number;
  sample: (Pick<PlannedSend, 'ruleId' | 'ruleSetHash' | 'destination'> & { eventId: number })[];
};

/**
 * Plans a bulk replay event by event, by routing mode, and keeps its summary. `current` narrows today's
 * rules to `ruleId` (an unknown rule fails the job, as it always did); `original` narrows each event's own
 * set, where a rule that did not exist then simply plans nothing.
 */
export class BulkReplayPlanner {
  private readonly counts: Omit<BulkReplaySummary, 'route' | 'dryRun'> = { perRule: {}, withheld: {}, unknownRouting: 0, sample: [] };

  constructor(
    private readonly router: ReplayRouter,
    readonly route: RouteMode,
    private readonly ruleId: string | null,
    readonly dryRun: boolean,
  ) {}

  /** The outbox rows for one event (none when its original routing is unknown); throws for a body that is not JSON. */
  async plan(event: EventBody): Promise<NewDelivery[]> {
    let routing: Routing;
    try {
      routing = await this.router.routingFor(event, this.route);
    } catch (err) {
      if (err instanceof HookrelayError && err.code === 'original_routing_unknown') {
        this.counts.unknownRouting += 1;
        return [];
      }
      throw err;
    }
    const ruleSet = this.narrow(routing.ruleSet);
    const plan = await planRoutedReplay({ ...routing, ruleSet }, ruleInputOf(event), { preview: false });
    for (const send of plan.sends) {
      this.counts.perRule[send.ruleId] = (this.counts.perRule[send.ruleId] ?? 0) + 1;
      if (this.counts.sample.length < SAMPLE_SIZE) {
        this.counts.sample.push({ eventId: event.id, ruleId: send.ruleId, ruleSetHash: send.ruleSetHash, destination: send.destination });
      }
    }
    for (const held of plan.withheld) {
      if (this.ruleId !== null && held.ruleId !== this.ruleId) continue;
      this.counts.withheld[held.ruleId] = (this.counts.withheld[held.ruleId] ?? 0) + 1;
    }
    return plan.deliveries;
  }

  summary(): BulkReplaySummary {
    return { route: this.route, dryRun: this.dryRun, ...structuredClone(this.counts) };
  }

  private narrow(ruleSet: RuleSet): RuleSet {
    if (this.ruleId === null) return ruleSet;
    const rules = ruleSet.rules.filter((rule) => rule.id === this.ruleId);
    if (rules.length === 0 && this.route === 'current') throw new Error(`rule "${this.ruleId}" is no longer in the rule set`);
    return { ...ruleSet, rules };
  }
}
