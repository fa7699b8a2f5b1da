import { z } from 'zod';
import { parseDuration } from '../duration.js';
import { SERVICE_SIGNATURE_HEADER } from '../signing/scheme.js';
import { templateSyntaxError } from './env-references.js';

/**
 * The shape of one rule as written in `rules/*.yaml`. Strict everywhere: a misspelt key is an error, not
 * a silently ignored setting. Only shape is checked here; what needs the environment (resolved URLs,
 * secrets) or a compiler (query operators, JSONata) is checked when the rule is compiled.
 */

export const DEFAULT_TIMEOUT = '10s';

/**
 * Delay before each attempt, counted from the previous one: the first is immediate, then 5 s, 5 min, ...
 * Eight attempts over about 28 hours.
 */
export const DEFAULT_RETRY_SCHEDULE: readonly string[] = ['0s', '5s', '5m', '30m', '2h', '5h', '10h', '10h'];

const MAX_TIMEOUT = '5m';
const MAX_RETRY_DELAY = '7d';

function durationWithin(max: string, allowZero: boolean) {
  const maxMs = parseDuration(max);
  return z
    .union([z.string(), z.number()])
    .superRefine((value, ctx) => {
      let parsed: number;
      try {
        parsed = parseDuration(value);
      } catch (err) {
        ctx.addIssue({ code: 'custom', message: (err as Error).message });
        return;
      }
      if (!allowZero && parsed === 0) ctx.addIssue({ code: 'custom', message: 'must be longer than 0' });
      if (parsed > maxMs) ctx.addIssue({ code: 'custom', message: `must be at most ${max}` });
    })
    .meta({ description: 'A duration such as 500ms, 10s, 5m, 2h, or a number of milliseconds.' });
}

/** A string that may hold `${NAME}` references. */
const templated = z.string().superRefine((value, ctx) => {
  const problem = templateSyntaxError(value);
  if (problem) ctx.addIssue({ code: 'custom', message: problem });
});

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** Framing and body headers the sender sets itself; letting a rule set them would corrupt requests. */
const RESERVED_HEADERS = new Set(['host', 'content-length', 'content-type', 'transfer-encoding', 'connection']);

const headerName = z
  .string()
  .regex(HEADER_NAME, 'must be a valid HTTP header name')
  .refine((name) => !RESERVED_HEADERS.has(name.toLowerCase()), 'is set by hookrelay and cannot be overridden');

/** Hop-by-hop headers (RFC 9110 7.6.1) describe one connection, never the message: they are not passed on. */
const HOP_BY_HOP_HEADERS = new Set(['keep-alive', 'proxy-connection', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer', 'upgrade']);

const forwardedHeaderName = headerName
  .refine((name) => !HOP_BY_HOP_HEADERS.has(name.toLowerCase()), 'is a hop-by-hop header and is never forwarded')
  .transform((name) => name.toLowerCase());

const destinationSchema = z
  .strictObject({
    url: templated.min(1).meta({ description: 'http(s) URL to forward to; may use ${ENV} references.' }),
    method: z.enum(['POST', 'PUT', 'PATCH']).default('POST'),
    headers: z
      .record(headerName, templated)
      .optional()
      .meta({ description: 'Extra request headers; values may use ${ENV} references (resolved at load, never logged).' }),
    forwardHeaders: z
      .array(forwardedHeaderName)
      .max(50)
      .default([])
      .meta({
        description:
          'Headers received with the event that are passed on unchanged, e.g. [x-service-signature] so the destination can verify the checkout\'s own signature (forward the original bytes: no transform). Credentials are never stored, so never forwarded; hop-by-hop headers are refused.',
      }),
  })
  .meta({ description: 'Where matching events are sent.' });

const secret = templated.min(1).meta({
  description: 'Signing secret, usually an ${ENV} reference. standard-webhooks: whsec_<base64>; hmac-sha256-hex: any string.',
});

const signingSchema = z
  .discriminatedUnion('scheme', [
    z.strictObject({ scheme: z.literal('none') }),
    z.strictObject({ scheme: z.literal('standard-webhooks'), secret }),
    z.strictObject({
      scheme: z.literal('hmac-sha256-hex'),
      secret,
      header: headerName.default(SERVICE_SIGNATURE_HEADER).meta({ description: 'Header carrying the hex signature.' }),
    }),
  ])
  .default({ scheme: 'none' })
  .meta({ description: 'How outgoing requests are signed. Default: not signed.' });

const retrySchema = z
  .strictObject({
    schedule: z
      .array(durationWithin(MAX_RETRY_DELAY, true))
      .min(1)
      .max(30)
      .default([...DEFAULT_RETRY_SCHEDULE])
      .meta({ description: 'Delay before each attempt; the first entry is the first attempt, so its length is the attempt budget.' }),
    retryOn: z
      .array(z.int().min(400).max(499))
      .default([])
      .meta({ description: 'Extra 4xx statuses to retry (408, 425 and 429 are always retried; other 4xx dead-letter).' }),
  })
  .default({ schedule: [...DEFAULT_RETRY_SCHEDULE], retryOn: [] });

const ORDER_KEY_PATH = /^[A-Za-z0-9_$-]+(\.[A-Za-z0-9_$-]+)*$/;
/** The longest a key may be blocked by its head before `onBlockedTimeout` applies. */
const MAX_BLOCKED_FOR = '30d';

const orderSchema = z
  .strictObject({
    key: z
      .string()
      .regex(ORDER_KEY_PATH, 'must be a dot path into the event body, e.g. result.checkoutId')
      .meta({ description: 'Dot path into the event body whose value is the order key, e.g. result.checkoutId. Events without a string or number there are delivered unordered.' }),
    maxBlockedFor: durationWithin(MAX_BLOCKED_FOR, false)
      .optional()
      .meta({ description: 'How long a failing head may block its key, from its first failed attempt. Default: no bound (the retry schedule decides).' }),
    onBlockedTimeout: z
      .enum(['dead-letter', 'keep-blocked'])
      .default('dead-letter')
      .meta({ description: 'dead-letter: at maxBlockedFor the head is dead-lettered and the key moves on. keep-blocked: the head is never dead-lettered for a retryable failure (it keeps retrying at the last schedule step) and the key is reported overdue.' }),
  })
  .superRefine((order, ctx) => {
    if (order.onBlockedTimeout === 'keep-blocked' && order.maxBlockedFor === undefined) {
      ctx.addIssue({ code: 'custom', path: ['maxBlockedFor'], message: 'is required with onBlockedTimeout: keep-blocked (the time after which the key counts as overdue)' });
    }
  })
  .meta({ description: 'Deliveries with the same key value go strictly in received order: the next starts only when the previous is delivered or dead-lettered.' });

export const ruleSchema = z
  .strictObject({
    id: z
      .string()
      .max(64)
      .regex(/^[a-z0-9][a-z0-9_-]*$/, 'must match [a-z0-9][a-z0-9_-]* (lower case, digits, _ and -)')
      .meta({ description: 'Unique, stable identifier; deliveries record it.' }),
    description: z.string().optional(),
    on: z
      .array(z.string().min(1))
      .min(1)
      .meta({ description: 'Event names the rule takes, e.g. [transfer:succeeded]; "*" takes every event.' }),
    source: z.string().min(1).optional().meta({ description: 'Only events received on this source. Default: every source.' }),
    where: z
      .record(z.string(), z.unknown())
      .default({})
      .meta({ description: 'MongoDB-style query on the JSON body, e.g. result.totalPriceUsd: { $gte: 100 }.' }),
    transform: z
      .string()
      .min(1)
      .optional()
      .meta({ description: 'JSONata expression producing the outgoing JSON body. Absent: the original bytes are forwarded untouched.' }),
    to: destinationSchema,
    sign: signingSchema,
    timeout: durationWithin(MAX_TIMEOUT, false).default(DEFAULT_TIMEOUT),
    retry: retrySchema,
    concurrency: z.int().min(1).max(1000).optional().meta({ description: 'Ceiling of requests in flight to this destination origin; the limit adapts below it (default: delivery.concurrency, 256).' }),
    rateLimit: z
      .strictObject({ perSecond: z.number().positive().max(10_000) })
      .optional()
      .meta({ description: 'Max requests started per second to this destination.' }),
    redrive: z
      .union([z.boolean(), z.strictObject({ maxPerSecond: z.number().positive().max(1000) })])
      .optional()
      .meta({ description: 'After an outage of the destination, send its retryable dead letters again when it recovers (true, or { maxPerSecond }). Default: delivery.redrive.' }),
    order: orderSchema.optional(),
    enabled: z.boolean().default(true),
  })
  .meta({ id: 'Rule', title: 'hookrelay rule', description: 'One routing rule: which events, where they go, how.' });

/** A rule file holds one rule per YAML document, or a list of rules. */
export const ruleFileSchema = z
  .union([ruleSchema, z.array(ruleSchema)])
  .meta({ title: 'hookrelay rule file', description: 'One rule, or a list of rules. A file may also hold several YAML documents separated by ---.' });

export type RuleDefinition = z.output<typeof ruleSchema>;
