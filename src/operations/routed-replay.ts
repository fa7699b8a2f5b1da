import { planReplay } from './replay-event.js';
import type { OperationsContext } from './context.js';
import { ruleInputOf } from './event-input.js';
import { HookrelayError } from '../errors.js';
import { renderOutcome } from '../rules/render-outcome.js';
import type { RuleEventInput } from '../rules/types.js';
import type { Delivery, NewDelivery } from '../store/outbox-store.js';
import { DEFAULT_ROUTE_MODE, ReplayRouter, type RouteMode, type Routing } from './replay-routing.js';

export interface RoutedReplayRequest {
  route?: RouteMode;
  ruleId?: string;
  /** With ruleId: planned even when the rule's filter does not match the event. */
  force?: boolean;
  /** Plan and answer what would be sent where; create nothing. */
  dryRun?: boolean;
}

/** One delivery a replay creates (or would create): where it goes, as the rule is written. */
export interface PlannedSend {
  ruleId: string;
  ruleSetHash: string;
  /** The rule's `to.url` as written in its file (`${ENV}` references unresolved: never a resolved secret). */
  destination: string;
  method: string;
  contentType: string;
  /** What would be sent: the transformed body, or the event's raw bytes (as UTF-8 text). */
  body: string;
  /** Set when the transform fails in the preview: delivery renders it the same way and dead-letters it with this reason. */
  deadReason: string | null;
}

export interface Withheld {
  ruleId: string;
  reason: string;
}

export interface PlannedReplay {
  route: RouteMode;
  ruleSetHash: string;
  sends: PlannedSend[];
  withheld: Withheld[];
  /** The outbox rows to create (one per send, same order). */
  deliveries: NewDelivery[];
}

export interface RoutedReplayAnswer extends Omit<PlannedReplay, 'deliveries'> {
  dryRun: boolean;
  /** The deliveries created (none on a dry run). */
  created: Delivery[];
}

/**
 * Plans one event's replay under `routing`; rules the routing withholds are reported, never silently dropped.
 * Each send's body is previewed in the transform sandbox, as the delivery loop will render it (`preview:
 * false` skips that, for a bulk replay that only counts); the rows themselves are rendered at delivery.
 */
export async function planRoutedReplay(routing: Routing, input: RuleEventInput, options: Pick<RoutedReplayRequest, 'ruleId' | 'force'> & { preview?: boolean }): Promise<PlannedReplay> {
  const planned = await planReplay(routing.ruleSet, input, options);
  const rules = new Map(routing.ruleSet.rules.map((rule) => [rule.id, rule]));
  const sends: PlannedSend[] = [];
  const deliveries: NewDelivery[] = [];
  const withheld: Withheld[] = [];
  for (const delivery of planned) {
    const reason = routing.withheld.get(delivery.ruleId);
    if (reason !== undefined) {
      withheld.push({ ruleId: delivery.ruleId, reason });
      continue;
    }
    const rule = rules.get(delivery.ruleId)!;
    deliveries.push(delivery);
    const rendered = options.preview === false ? { body: input.raw, contentType: delivery.contentType } : await renderOutcome(rule, input);
    sends.push({
      ruleId: delivery.ruleId,
      ruleSetHash: delivery.ruleSetHash,
      destination: rule.describe().to.url,
      method: rule.destination.method,
      contentType: rendered.contentType,
      body: rendered.body.toString('utf8'),
      deadReason: rendered.deadReason ?? null,
    });
  }
  // Rules that could not be compiled on this node were not evaluated: say so, whatever they would have done.
  for (const [ruleId, reason] of routing.withheld) if (!rules.has(ruleId)) withheld.push({ ruleId, reason });
  return { route: routing.mode, ruleSetHash: routing.ruleSet.hash, sends, withheld, deliveries };
}

/** Replay of one stored event by routing mode; a dry run answers the same plan and creates nothing. */
export async function replayWithRouting(ctx: OperationsContext, eventId: number, request: RoutedReplayRequest): Promise<RoutedReplayAnswer> {
  const event = await ctx.store.getEvent(eventId);
  if (!event) throw new HookrelayError('not_found', `No event ${eventId}.`);
  if (event.quarantine === 'held') throw new HookrelayError('event_quarantined', `Event ${eventId} is held in quarantine: release it to route it.`);
  const router = new ReplayRouter(ctx.store, ctx.env, () => ctx.rules.current());
  const routing = await router.routingFor(event, request.route ?? DEFAULT_ROUTE_MODE);
  const { deliveries, ...plan } = await planRoutedReplay(routing, ruleInputOf(event), request);
  const dryRun = request.dryRun ?? false;
  if (dryRun || deliveries.length === 0) return { ...plan, dryRun, created: [] };
  const ids = await ctx.store.createDeliveries(eventId, deliveries, 'replay');
  const created = await Promise.all(ids.map((id) => ctx.store.getDelivery(id)));
  return { ...plan, dryRun, created: created.filter((d) => d !== null).map(({ attemptLog: _attempts, ...delivery }) => delivery) };
}
