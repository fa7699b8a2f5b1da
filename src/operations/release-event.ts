import { HookrelayError } from '../errors.js';
import { validateEvent } from '../ingest/validate-event.js';
import { planDeliveries } from '../rules/plan.js';
import type { StoredIssue } from '../store/quarantine-store.js';
import type { StoredEvent } from '../store/event-store.js';
import type { OperationsContext } from './context.js';
import { ruleInputOf } from './event-input.js';

export interface ReleaseRequest {
  /** Release although the checks still fail: an operator's decision, recorded. */
  force?: boolean;
  /** Who releases it (recorded). */
  by: string;
}

export interface ReleaseAnswer {
  event: StoredEvent;
  deliveryIds: number[];
}

/** What still fails: the event schema, then the pinned contract of the event's (source, event). */
function failingChecks(ctx: OperationsContext, event: StoredEvent, parsed: unknown): { from: 'schema' | 'contract'; issues: StoredIssue[] } | null {
  let name = event.event;
  try {
    name = validateEvent(parsed).envelope.event;
  } catch (err) {
    if (err instanceof HookrelayError && err.code === 'invalid_payload') return { from: 'schema', issues: (err.details as { issues: StoredIssue[] }).issues };
    throw err;
  }
  const violation = ctx.contracts?.().check(event.source, name, parsed) ?? null;
  return violation && { from: 'contract', issues: violation.issues };
}

/**
 * A body held for the schema is keyed by its digest, so the sender's corrected body of the same transfer was
 * stored as an event of its own: the event under the body's `result.id`, if any, that is not itself held.
 */
async function correctedCopy(ctx: OperationsContext, event: StoredEvent, name: string, body: unknown): Promise<{ id: number; transferId: string } | null> {
  const transferId = (body as { result?: { id?: unknown } } | null)?.result?.id;
  if (typeof transferId !== 'string' || transferId === event.transferId) return null;
  const found = await ctx.store.listEvents({ source: event.source, event: name, transferId }, { limit: 5 });
  const stored = found.items.find((other) => other.id !== event.id && other.quarantine !== 'held');
  return stored ? { id: stored.id, transferId } : null;
}

function notReleasable(eventId: number, reason: 'released' | 'not-held' | 'missing', event?: StoredEvent | null): HookrelayError {
  if (reason === 'missing') return new HookrelayError('not_found', `No event ${eventId}.`);
  if (reason === 'not-held') return new HookrelayError('not_quarantined', `Event ${eventId} was never held in quarantine.`);
  return new HookrelayError('already_released', `Event ${eventId} was released before: it is not routed again.`, event?.release ?? null);
}

/**
 * Routes a held event once, like a new event: today's rules are evaluated now and its outbox rows written with
 * the release, in one transaction (an ordered rule's row joins the back of its key). Allowed when the event
 * schema and the pinned contract now accept the body, or when forced. A second release is `already_released`.
 */
export async function releaseQuarantined(ctx: OperationsContext, eventId: number, request: ReleaseRequest): Promise<ReleaseAnswer> {
  const event = await ctx.store.getEvent(eventId);
  if (!event) throw notReleasable(eventId, 'missing');
  if (event.quarantine !== 'held') throw notReleasable(eventId, event.quarantine === 'released' ? 'released' : 'not-held', event);
  const input = ruleInputOf(event);
  // Rules see the event name the body gives (a body held for the schema is stored under "(none)" when it names none).
  const named = typeof (input.body as { event?: unknown } | null)?.event === 'string' ? (input.body as { event: string }).event : event.event;
  // First: whether to route this purchase at all, then whether its body passes.
  const since = await correctedCopy(ctx, event, named, input.body);
  if (since !== null && !request.force) {
    throw new HookrelayError('transfer_stored_since', `Transfer ${since.transferId} was stored since, as event ${since.id} (a corrected body): releasing this one would route the purchase twice. Release with force to route it anyway.`, { eventId: since.id, transferId: since.transferId });
  }
  const failing = failingChecks(ctx, event, input.body);
  if (failing && !request.force) {
    const what = failing.from === 'schema' ? 'the event schema' : 'its pinned contract';
    throw new HookrelayError('release_refused', `The body still fails ${what}: fix the schema or contract, or release with force.`, failing);
  }
  const ruleSet = ctx.rules.current();
  const deliveries = await planDeliveries(ruleSet, { ...input, event: named });
  const outcome = await ctx.store.releaseEvent(eventId, { releasedAt: ctx.now(), releasedBy: request.by, forced: failing !== null || since !== null }, { ruleSetHash: ruleSet.hash, deliveries });
  if (!outcome.released) throw notReleasable(eventId, outcome.reason, await ctx.store.getEvent(eventId));
  return { event: (await ctx.store.getEvent(eventId)) ?? event, deliveryIds: outcome.deliveryIds };
}
