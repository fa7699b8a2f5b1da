import { z } from 'zod';
import type { ClauseExplanation } from '../../rules/explain.js';

/** The explanation answer (GET /events/{id}/explain), documented in the OpenAPI document like every answer. */

export const ExplainQuerySchema = z
  .object({ ruleId: z.string().min(1).max(200).optional().meta({ description: 'explain this rule only (404 when unknown)' }) })
  .strict();

export const ClauseSchema: z.ZodType<ClauseExplanation> = z
  .object({
    path: z.string().optional().meta({ description: 'field path the clause reads; inside `$elemMatch` relative to the element; absent for `$and`/`$or`/`$nor`' }),
    operator: z.string().meta({ description: 'query operator; `$eq` for a plain value, `$and` also for several conditions on one field, `element` for one array element of an `$elemMatch`, `any` for a rule without `source`' }),
    expected: z.unknown().optional().meta({ description: 'the value the rule compares with' }),
    found: z.unknown().optional().meta({ description: 'the value in the event (a list when the path reads through an array)' }),
    absent: z.boolean().optional().meta({ description: 'true when the event has no value at `path`' }),
    pass: z.boolean(),
    get children() {
      return z.array(ClauseSchema).optional().meta({ description: 'the branches, each judged' });
    },
  })
  .meta({ id: 'ExplainClause' });

const DestinationVerdictSchema = z
  .union([
    z.object({ checked: z.literal(true), allowed: z.literal(true), addresses: z.array(z.string()) }),
    z.object({ checked: z.literal(true), allowed: z.literal(false), reason: z.string() }),
    z.object({ checked: z.literal(false), reason: z.string() }),
  ])
  .meta({ id: 'DestinationVerdict', description: "the network guard's decision on the destination (no connection is made)" });

const OutgoingPreviewSchema = z
  .object({
    method: z.string(),
    url: z.string().meta({ description: 'as written in the rule: ${ENV} references unresolved, credentials redacted' }),
    headers: z.record(z.string(), z.string()).meta({ description: 'content-type, the rule headers as written, delivery id and signature' }),
    contentType: z.string(),
    body: z.string().meta({ description: 'the body after the transform (UTF-8 text)' }),
    deadReason: z.string().optional().meta({ description: 'the transform fails: the delivery would be stored dead-lettered with this reason' }),
    renderError: z.string().optional().meta({ description: 'deprecated: the same as deadReason', deprecated: true }),
    signError: z.string().optional(),
    signing: z.object({ scheme: z.string(), header: z.string().optional(), secret: z.string().optional().meta({ description: 'the ${ENV} reference, or [redacted]' }) }),
  })
  .meta({ id: 'OutgoingPreview', description: 'what the rule would send; nothing is sent' });

export const RuleExplanationSchema = z
  .object({
    ruleId: z.string(),
    description: z.string().optional(),
    file: z.string(),
    line: z.number().int(),
    enabled: z.boolean(),
    matched: z.boolean().meta({ description: "the matcher's verdict: enabled and every clause passes" }),
    clausesPass: z.boolean().meta({ description: 'every clause passes (a disabled rule may)' }),
    on: ClauseSchema,
    source: ClauseSchema,
    where: z.array(ClauseSchema),
    failing: z.array(z.string()).meta({ description: 'every failing clause, one line each' }),
    notes: z.array(z.string()).meta({ description: 'disabled, destination refused, transform failing' }),
    outgoing: OutgoingPreviewSchema.optional(),
    destination: DestinationVerdictSchema.optional(),
  })
  .meta({ id: 'RuleExplanation' });

export const EventExplanationSchema = z
  .object({
    ruleSetHash: z.string().meta({ description: 'the rule set loaded now, which the explanation was computed with' }),
    event: z.object({ id: z.number().int().nullable(), source: z.string(), event: z.string() }),
    matchedRuleIds: z.array(z.string()),
    plannedUnder: z.array(z.string()).meta({ description: "rule-set hashes the event's stored deliveries were planned under" }),
    ruleSetNote: z.string().nullable().meta({ description: 'set when a stored delivery was planned under another rule set' }),
    rules: z.array(RuleExplanationSchema),
  })
  .meta({ id: 'EventExplanation' });

export type EventExplanationView = z.output<typeof EventExplanationSchema>;
