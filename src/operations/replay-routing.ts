import { HookrelayError } from '../errors.js';
import { compileKeptRuleSet } from '../rules/kept-rule-set.js';
import type { Env } from '../rules/env-references.js';
import type { RuleSet } from '../rules/types.js';
import type { EventBody } from '../store/event-store.js';
import type { RuleSetStore } from '../store/rule-set-store.js';
import type { OutboxStore } from '../store/outbox-store.js';

/**
 * Which rules a replay goes through.
 * - `current`: today's rules, re-evaluated: what the event would get if it arrived now.
 * - `original`: the rule set that routed the event when it arrived (kept by its hash), with that time's
 *   filters, transforms, destinations and signing, even where a rule has changed since.
 * `current` is the default: a replay usually follows a fix (a rule, a destination, the receiving end),
 * and it is what replay has always done; `original` reproduces what happened, on request.
 */
export const ROUTE_MODES = ['current', 'original'] as const;
export type RouteMode = (typeof ROUTE_MODES)[number];
export const DEFAULT_ROUTE_MODE: RouteMode = 'current';

/** The rules one event is replayed through, and the rules of that set that are not sent and why. */
export interface Routing {
  mode: RouteMode;
  ruleSet: RuleSet;
  /**
   * Rules of an original set that are not sent (removed or disabled in today's rules: today's rules are the
   * kill switch; or not compilable on this node), by rule id. Reported when the rule matches the event.
   */
  withheld: Map<string, string>;
}

export function originalRoutingUnknown(eventId: number): HookrelayError {
  return new HookrelayError(
    'original_routing_unknown',
    `Event ${eventId} was stored before hookrelay kept rule sets: the rules that routed it are unknown. Replay it with route "current" (today's rules).`,
    { eventId, offer: 'current' },
  );
}

/**
 * Builds the routing of events by mode; compiled original sets are cached by hash for the life of one
 * operation (a bulk replay meets few distinct sets).
 */
export class ReplayRouter {
  private readonly originals = new Map<string, Routing | null>();

  constructor(
    private readonly store: RuleSetStore & OutboxStore,
    private readonly env: Env,
    private readonly today: () => RuleSet,
  ) {}

  async routingFor(event: Pick<EventBody, 'id' | 'ruleSetHash'>, mode: RouteMode): Promise<Routing> {
    if (mode === 'current') return { mode, ruleSet: this.today(), withheld: new Map() };
    const hash = event.ruleSetHash ?? (await this.firstPlannedHash(event.id));
    const routing = hash === null ? null : await this.original(hash);
    if (!routing) throw originalRoutingUnknown(event.id);
    return routing;
  }

  /** An event stored before events recorded their rule set: the set its first delivery was planned with. */
  private async firstPlannedHash(eventId: number): Promise<string | null> {
    let before: number | undefined;
    let oldest: string | null = null;
    do {
      const page = await this.store.listDeliveries({ eventId }, { limit: 100, ...(before !== undefined && { before }) });
      for (const delivery of page.items) if (delivery.origin === 'ingest') oldest = delivery.ruleSetHash;
      before = page.nextCursor ?? undefined;
    } while (before !== undefined);
    return oldest;
  }

  private async original(hash: string): Promise<Routing | null> {
    const today = this.today();
    const key = `${hash}\0${today.hash}`;
    if (this.originals.has(key)) return this.originals.get(key)!;
    const kept = await this.store.getRuleSet(hash);
    let routing: Routing | null = null;
    if (kept) {
      const { ruleSet, problems } = compileKeptRuleSet(hash, kept.rules, this.env, today, kept.firstLoadedAt);
      const todays = new Map(today.rules.map((rule) => [rule.id, rule]));
      const withheld = new Map(problems);
      for (const rule of ruleSet.rules) {
        const now = todays.get(rule.id);
        if (kept.kind === 'one-off') continue;
        if (!now) withheld.set(rule.id, `rule "${rule.id}" is no longer in today's rules: not sent (removing a rule stops its deliveries; replay with route "current" for today's rules)`);
        else if (!now.enabled) withheld.set(rule.id, `rule "${rule.id}" is disabled in today's rules: not sent until it is enabled`);
      }
      routing = { mode: 'original', ruleSet, withheld };
    }
    this.originals.set(key, routing);
    return routing;
  }
}
