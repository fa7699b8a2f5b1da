import { z } from 'zod';
import { ROUTE_MODES } from '../../operations/replay-routing.js';
import { DeliveryStateSchema, QuarantineStateSchema, ValidationSchema } from '../../operations/view-schemas.js';

/**
 * What the admin API accepts. These schemas validate every request and are also the source of the
 * OpenAPI document (`openapi.ts`), so the two cannot drift. Query values arrive as strings: numbers are
 * coerced. Every object is strict: an unknown (misspelt) parameter is refused, not silently ignored.
 */

const unixMs = z.coerce.number().int().min(0).meta({ description: 'unix time in milliseconds' });
const text = z.string().min(1).max(500);
const positiveId = z.coerce.number().int().positive();

const eventFilterShape = {
  event: text.optional().meta({ description: 'event name, e.g. transfer:succeeded' }),
  source: text.optional(),
  checkoutId: text.optional(),
  email: text.optional().meta({ description: 'matched case-insensitively' }),
  walletAddress: text.optional().meta({ description: 'matched case-insensitively' }),
  transferId: text.optional().meta({ description: 'the `result.id` of the event' }),
  receivedFrom: unixMs.optional().meta({ description: 'first received at or after (unix ms)' }),
  receivedTo: unixMs.optional().meta({ description: 'first received before (unix ms)' }),
  validation: ValidationSchema.optional(),
  quarantine: QuarantineStateSchema.optional().meta({ description: 'only events held in quarantine, or only those released from it' }),
  deliveryState: DeliveryStateSchema.optional().meta({ description: 'events with at least one delivery in this state' }),
};

export const EventFilterSchema = z.object(eventFilterShape).strict().meta({ id: 'EventFilter' });

const pageShape = {
  limit: z.coerce.number().int().min(1).max(500).default(50),
  cursor: z.string().min(1).max(200).optional().meta({ description: '`nextCursor` of the previous page' }),
};

export const EventsQuerySchema = z.object({ ...eventFilterShape, ...pageShape }).strict();

export const EventStreamQuerySchema = z
  .object({
    ...eventFilterShape,
    since: z
      .string()
      .regex(/^(\d+|\d+(\.\d+)?\s*(ms|s|m|h|d))$/, 'an event id (e.g. 1234) or a duration (e.g. 10m, 2h)')
      .optional()
      .meta({ description: 'start after this event id, or with the events received in the last duration (10m, 2h); `Last-Event-ID` wins when both are sent' }),
    body: z.enum(['true', 'false']).default('false').transform((v) => v === 'true').meta({ description: 'include each event\'s headers and exact bytes' }),
  })
  .strict();

export const DeliveriesQuerySchema = z
  .object({ state: DeliveryStateSchema.optional(), ruleId: text.optional(), eventId: positiveId.optional(), ...pageShape })
  .strict();

export const DeadCountQuerySchema = z.object({ ruleId: text.optional() }).strict();

export const NumericIdParamsSchema = z.object({ id: positiveId }).strict();
export const RuleIdParamsSchema = z.object({ id: z.string().min(1).max(200) }).strict();

export const BlockedKeysQuerySchema = z.object({ limit: z.coerce.number().int().min(1).max(500).default(50) }).strict();

export const RouteModeSchema = z
  .enum(ROUTE_MODES)
  .meta({ id: 'RouteMode', description: "`current` (default): today's rules, as if the event arrived now. `original`: the rule set that routed the event when it arrived, with that time's filters, transforms, destinations and signing" });

export const ReplayEventBodySchema = z
  .object({
    ruleId: z.string().min(1).optional().meta({ description: 'only this rule (404 when unknown)' }),
    force: z.boolean().optional().meta({ description: 'with ruleId: replay even when the event does not match the rule' }),
    route: RouteModeSchema.optional(),
    dryRun: z.boolean().optional().meta({ description: 'answer what would be sent where, create nothing' }),
  })
  .strict()
  .refine((body) => !body.force || body.ruleId !== undefined, { path: ['force'], message: 'force needs a ruleId' });

export const ReleaseBodySchema = z
  .object({
    force: z.boolean().optional().meta({ description: "release although neither the event schema nor the pinned contract accepts the body (an operator's decision, recorded)" }),
    by: z.string().min(1).max(200).regex(/^[^\u0000-\u001f\u007f]+$/, 'printable text').optional().meta({ description: 'who releases it, recorded with the release (default `api`)' }),
  })
  .strict();

export const EditedReplayBodySchema = z
  .object({
    body: z.string().min(1).meta({ description: 'the edited body as JSON text: stored and sent byte for byte (as UTF-8)' }),
    meantInvalid: z.boolean().optional().meta({ description: 'store and send a body that fails the event schema; it is stored with validation `invalid`' }),
    ruleId: z.string().min(1).optional().meta({ description: "send through this rule only, even if its filter does not match (the answer's appliedWithoutMatch says why)" }),
    to: z.url({ protocol: /^https?$/, message: 'must be an http(s) URL' }).max(2000).optional().meta({ description: 'send to this URL instead of through the rules: one delivery, unsigned, through the network guard' }),
    via: z.enum(['console', 'cli', 'api']).optional().meta({ description: 'the front end the edit was made in (default api)' }),
    dryRun: z.boolean().optional().meta({ description: 'check and plan only: store and send nothing; schema failures come back as `issues` instead of a 422' }),
  })
  .strict()
  .refine((body) => body.ruleId === undefined || body.to === undefined, { path: ['to'], message: 'give ruleId or to, not both' });

export const BulkReplayBodySchema = z
  .object({
    filter: EventFilterSchema,
    ruleId: z.string().min(1).optional().meta({ description: 'only this rule; events it does not match are skipped' }),
    route: RouteModeSchema.optional(),
    dryRun: z.boolean().optional().meta({ description: 'count what would be sent per rule (with a sample) in the job summary; create nothing' }),
  })
  .strict();

// A bulk retry takes dead-lettered deliveries only, so it has no delivery-state filter.
const { deliveryState: _deliveryState, ...retryEventShape } = eventFilterShape;

export const BulkRetryBodySchema = z
  .object({
    filter: z
      .object({
        ...retryEventShape,
        ruleId: z.string().min(1).optional(),
        eventId: z.number().int().positive().optional(),
      })
      .strict(),
  })
  .strict();

export const SIGNING_SCHEMES = ['hmac-sha256-hex', 'standard-webhooks'] as const;

export const ResendSigningSchema = z
  .discriminatedUnion('mode', [
    z.object({ mode: z.literal('original') }).strict().meta({ description: 'the signature headers received with the event, unchanged' }),
    z
      .object({ mode: z.literal('resign'), scheme: z.enum(SIGNING_SCHEMES), secret: z.string().min(1).max(1000) })
      .strict()
      .meta({ description: 'signed afresh with this secret (standard-webhooks: base64, optionally prefixed whsec_)' }),
    z.object({ mode: z.literal('none') }).strict().meta({ description: 'no signature headers' }),
  ])
  .meta({ id: 'ResendSigning' });

export const ResendBodySchema = z
  .object({
    url: z.url({ protocol: /^https?$/, message: 'must be an http(s) URL' }).max(2000),
    signing: ResendSigningSchema,
  })
  .strict();

export const DryRunBodySchema = z
  .object({
    eventId: z.number().int().positive().optional().meta({ description: 'one stored event' }),
    last: z.number().int().min(1).max(1000).optional().meta({ description: 'the newest N stored events' }),
  })
  .strict()
  .refine((body) => (body.eventId === undefined) !== (body.last === undefined), { message: 'give either eventId or last (not both)' })
  .meta({ description: 'exactly one of eventId or last' });

export type EventFilterInput = z.output<typeof EventFilterSchema>;

export const OutagesQuerySchema = z
  .object({
    open: z.enum(['true', 'false']).default('false').transform((v) => v === 'true').meta({ description: 'only outages not yet closed' }),
    limit: z.coerce.number().int().min(1).max(500).default(50),
  })
  .strict();
