import { z } from 'zod';

/**
 * What the admin API answers. The handlers build their answers with these types (views.ts) and the
 * OpenAPI document is generated from the same schemas. Times are ISO 8601 strings.
 */

export const ValidationSchema = z.enum(['valid', 'unrecognised', 'invalid']);
export const DeliveryStateSchema = z.enum(['pending', 'delivered', 'dead']);

const isoTime = z.string().meta({ format: 'date-time' });
const int = z.number().int();

export const ErrorBodySchema = z
  .object({ error: z.object({ code: z.string(), message: z.string(), details: z.unknown() }) })
  .meta({ id: 'Error', description: 'see docs/errors.md; validation errors list `details.issues[{path,message,code}]`' });

export const EventEditSchema = z
  .object({
    editedFrom: int.meta({ description: 'id of the stored event it was edited from (it may since have been pruned)' }),
    editedAt: isoTime,
    via: z.enum(['console', 'cli', 'api']),
    number: int.meta({ description: '1, 2, ... among the edited copies of one transfer' }),
  })
  .meta({ id: 'EventEdit', description: 'set for an edited copy of a stored event; null for an event received (or imported)' });

export const QuarantineStateSchema = z.enum(['held', 'released']);

export const EventIssuesSchema = z
  .object({
    from: z.enum(['schema', 'contract']).meta({ description: '`schema`: the event schema of the spec (the body was answered 422); `contract`: a pinned contract' }),
    contract: z.string().optional().meta({ description: 'the contract file, when `from` is `contract`' }),
    issues: z.array(z.object({ path: z.string(), message: z.string(), code: z.string() })).meta({ description: 'the first issues found (at most 20)' }),
  })
  .meta({ id: 'EventIssues', description: 'what a check found wrong with the body; null when nothing' });

export const QuarantineReleaseSchema = z
  .object({
    releasedAt: isoTime,
    releasedBy: z.string(),
    forced: z.boolean().meta({ description: "released by an operator's decision while the checks still failed" }),
  })
  .meta({ id: 'QuarantineRelease' });

export const EventSummarySchema = z
  .object({
    id: int,
    source: z.string(),
    event: z.string(),
    transferId: z.string().meta({ description: '`result.id` of the event' }),
    checkoutId: z.string().nullable(),
    email: z.string().nullable(),
    walletAddress: z.string().nullable(),
    totalPriceUsd: z.number().nullable().meta({
      description: "`result.totalPriceUsd` of the body; null when it has none, and for an event a node of an earlier version stored during a rolling upgrade",
    }),
    validation: ValidationSchema,
    receivedAt: isoTime,
    lastReceivedAt: isoTime,
    receivedCount: int,
    bodyBytes: int,
    edit: EventEditSchema.nullable(),
    quarantine: QuarantineStateSchema.nullable().meta({ description: '`held`: stored, not routed until released; `released`: routed once at its release; null: never held' }),
    issues: EventIssuesSchema.nullable(),
    release: QuarantineReleaseSchema.nullable(),
  })
  .meta({ id: 'EventSummary' });

export const ForwardingSchema = z
  .object({
    state: z.enum(['none', 'pending', 'dead', 'delivered']).meta({
      description: '`none`: no rule took the event; `pending`: a delivery is still being tried; `dead`: none pending, one or more dead-lettered; `delivered`: every delivery arrived',
    }),
    pending: int,
    delivered: int,
    dead: int,
  })
  .meta({ id: 'Forwarding', description: 'whether the event was forwarded: its deliveries per state' });

export const EventListItemSchema = EventSummarySchema.extend({ forwarding: ForwardingSchema }).meta({ id: 'EventListItem' });

export const EventDetailSchema = EventSummarySchema.extend({
  importedAt: isoTime.nullable().meta({ description: 'when `events import` stored it (retention counts its age from then); null for a webhook received here' }),
  ruleSetHash: z.string().nullable().meta({ description: 'the rule set that routed it; null for events stored before rule sets were kept (their original routing is unknown)' }),
  headers: z.record(z.string(), z.string()).meta({ description: 'received headers, credentials removed (signatures kept)' }),
  body: z.string().meta({ description: 'the raw bytes as UTF-8 text' }),
  bodyBase64: z.string().meta({ description: 'the exact bytes received' }),
  parsed: z.unknown().meta({ description: 'the body parsed as JSON' }),
}).meta({ id: 'EventDetail' });

export const StreamedEventSchema = EventSummarySchema.extend({
  imported: z.boolean().meta({ description: 'stored by `events import`, not received here' }),
  importedAt: isoTime.nullable(),
  headers: z.record(z.string(), z.string()).optional().meta({ description: 'with `body=true`: received headers, credentials removed (signatures kept)' }),
  bodyBase64: z.string().optional().meta({ description: 'with `body=true`: the exact bytes received' }),
}).meta({ id: 'StreamedEvent', description: 'the `data` of one `event` message of the event stream' });

export const DeliveryWaitSchema = z
  .object({
    reason: z.enum(['rule_disabled', 'rule_removed', 'order_blocked', 'circuit_open', 'destination_failing', 'retry_schedule', 'concurrency', 'rate_limit', 'due']).meta({
      description:
        'rule_disabled: held until the rule is enabled; rule_removed: dead-lettered when next claimed; order_blocked: behind the failing first delivery of its order key (blockedBy); circuit_open: the destination is paused on the answering node (node) until `until`; destination_failing: an outage of the destination is open (the answering node runs no worker, so its circuit is unknown); retry_schedule: the next attempt of the schedule is at `until`; concurrency: the destination has as many attempts in flight on the answering node as its limit (due, waiting in a worker for a slot, or given back until its turn: `until`); rate_limit: sent in turn under the rule\'s rate limit (due, or at its turn: `until`); due: due now',
    }),
    until: isoTime.nullable().meta({ description: 'when it is expected to move: the next attempt, the end of a circuit pause, the blocking delivery\'s next attempt; null when unknown (a disabled rule)' }),
    since: isoTime.nullable().meta({ description: 'circuit_open, destination_failing: when the open outage of the destination began; order_blocked: when the blocking delivery first failed' }),
    message: z.string(),
    attempt: z.object({ next: int, of: int.nullable().meta({ description: "the number of the last attempt the rule's retry schedule allows in this pass (its length, after any attempts outside it: before a redrive, a lost connection tried again at once); null past it (a key kept blocked repeats the schedule's last step)" }) }),
    blockedBy: int.nullable().meta({ description: 'order_blocked: the delivery it waits behind' }),
    node: z.string().nullable().meta({ description: "the node whose in-memory state this is (circuit_open, concurrency): each node has its own circuits and limits" }),
  })
  .meta({ id: 'DeliveryWait' });

export const DeliverySchema = z
  .object({
    id: int,
    eventId: int,
    ruleId: z.string(),
    ruleSetHash: z.string(),
    origin: z.enum(['ingest', 'replay']),
    state: DeliveryStateSchema,
    contentType: z.string(),
    attempts: int,
    nextAttemptAt: isoTime.nullable(),
    lastStatus: int.nullable(),
    lastError: z.string().nullable(),
    deadReason: z.string().nullable(),
    pausedReason: z.string().nullable().meta({ description: 'why a pending delivery is held without attempts (its rule is disabled); null when it is not' }),
    lastAttemptSent: z.boolean().nullable().meta({ description: 'whether the last attempt reached the destination (false: refused by the SSRF guard, no such host, connection refused, rule removed, transform failed); null before any attempt' }),
    wait: DeliveryWaitSchema.nullable().meta({ description: 'why a pending delivery is not being sent now, and until when; null when it is not pending (and in replay and retry answers)' }),
    createdAt: isoTime,
    updatedAt: isoTime,
  })
  .meta({ id: 'Delivery' });

export const AttemptSchema = z
  .object({
    attempt: int,
    startedAt: isoTime,
    durationMs: z.number(),
    urlOrigin: z.string(),
    status: int.nullable(),
    errorCode: z.string().nullable(),
    errorMessage: z.string().nullable(),
    sent: z.boolean().meta({ description: 'whether the request reached the destination (false: refused by the network guard, no such host, connection refused, rule removed); an attempt sent without a status got no response (a timeout or a dropped connection)' }),
    responseExcerpt: z.string().nullable(),
    outcome: DeliveryStateSchema.meta({ description: 'the state the attempt left the delivery in' }),
  })
  .meta({ id: 'Attempt' });

export const RedriveSchema = z
  .object({
    outageId: int,
    kind: z.enum(['redrive', 'probe']).meta({ description: 'redrive: sent again when its outage closed; probe: sent again to find out whether the destination recovered' }),
    redrivenAt: isoTime,
    dueAt: isoTime.meta({ description: 'when its new pass of the retry schedule started (redrives are spread out at the rule rate)' }),
  })
  .meta({ id: 'Redrive' });

export const DeliveryDetailSchema = DeliverySchema.extend({
  attemptLog: z.array(AttemptSchema),
  redrives: z.array(RedriveSchema).meta({ description: 'each time the delivery was redriven after dying during an outage of its destination, oldest first' }),
}).meta({ id: 'DeliveryDetail' });

export const OutageSchema = z
  .object({
    id: int,
    destination: z.string().meta({ description: 'scheme://host:port' }),
    openedAt: isoTime.meta({ description: 'the first failed attempt of the run that opened the circuit' }),
    closedAt: isoTime.nullable().meta({ description: 'the success that closed it; null while the destination is failing' }),
    lastProbeAt: isoTime.nullable(),
    redriven: int.meta({ description: 'dead letters sent again because of it (probes included)' }),
  })
  .meta({ id: 'Outage' });

export const OutagesSchema = z.object({ items: z.array(OutageSchema) }).meta({ id: 'Outages' });

export const JobSchema = z
  .object({
    id: int,
    kind: z.enum(['replay', 'retry', 'schema-backfill']),
    state: z.enum(['running', 'done', 'cancelled', 'failed']),
    filter: z.record(z.string(), z.unknown()),
    ruleId: z.string().nullable(),
    total: int,
    processed: int,
    created: int,
    failed: int,
    startedAt: isoTime,
    finishedAt: isoTime.nullable(),
    error: z.string().nullable(),
    summary: z
      .record(z.string(), z.unknown())
      .nullable()
      .meta({ description: 'a replay job: `route`, `dryRun`, `perRule` (deliveries per rule), `withheld` (per rule), `unknownRouting` (events stored before rule sets were kept), `sample` (the first planned sends); a retry job: `skipped` (dead deliveries left alone, per rule, with `reason` and `message`)' }),
    nodeId: z.string().nullable().meta({ description: 'the node running the job (GET /cluster lists the live ones); null for jobs recorded before nodes had ids' }),
  })
  .meta({ id: 'Job' });

export const RetrySkipSchema = z
  .object({
    ruleId: z.string(),
    count: int,
    reason: z.enum(['rule_removed']).meta({ description: 'rule_removed: the rule is no longer in the rule set, so the worker would dead-letter the delivery again at once' }),
    message: z.string(),
  })
  .meta({ id: 'RetrySkip' });

export const DeadCountSchema = z
  .object({
    count: int.meta({ description: 'the dead deliveries a bulk retry would make pending' }),
    skipped: z.array(RetrySkipSchema).meta({ description: 'the dead deliveries it would leave alone, per rule, and why' }),
  })
  .meta({ id: 'DeadCount' });

export const EventListSchema = z.object({ items: z.array(EventListItemSchema), nextCursor: z.string().nullable() });
export const DeliveryListSchema = z.object({ items: z.array(DeliverySchema), nextCursor: z.string().nullable() });
export const ReleaseResultSchema = z
  .object({ event: EventDetailSchema, deliveryIds: z.array(int).meta({ description: 'the outbox rows the release created (none when no rule matches)' }) })
  .meta({ id: 'ReleaseResult' });
export type ReleaseResultView = z.output<typeof ReleaseResultSchema>;

export const EventWithDeliveriesSchema = z.object({ event: EventDetailSchema, deliveries: z.array(DeliveryDetailSchema) });
export const PlannedSendSchema = z
  .object({
    ruleId: z.string(),
    ruleSetHash: z.string().meta({ description: 'the rule version it is sent with (retries keep it)' }),
    destination: z.string().meta({ description: "the rule's to.url as written (${ENV} references unresolved)" }),
    method: z.string(),
    contentType: z.string(),
    body: z.string().meta({ description: 'what is sent (UTF-8 text): the transformed body or the raw bytes' }),
    deadReason: z.string().nullable().meta({ description: 'the transform failed: stored dead-lettered with this reason' }),
  })
  .meta({ id: 'PlannedSend' });

export const WithheldSchema = z
  .object({ ruleId: z.string(), reason: z.string() })
  .meta({ id: 'Withheld', description: 'a rule of the routing that matches but is not sent (removed or disabled today, or not compilable on this node)' });

export const ReplayResultSchema = z.object({
  route: z.enum(['current', 'original']),
  ruleSetHash: z.string().meta({ description: 'the rule set the replay went through' }),
  dryRun: z.boolean(),
  planned: z.array(PlannedSendSchema).meta({ description: 'what is (dry run: would be) sent where' }),
  withheld: z.array(WithheldSchema),
  deliveries: z.array(DeliverySchema).meta({ description: 'the deliveries created; none on a dry run' }),
});
export const JobListSchema = z.array(JobSchema);

export const EditedReplayResultSchema = z.object({
  event: EventDetailSchema.nullable().meta({ description: 'the edited copy: a new event whose `edit.editedFrom` is the original; null on a dry run' }),
  dryRun: z.boolean(),
  issues: z.array(z.object({ path: z.string(), message: z.string(), code: z.string() })).meta({ description: 'where the edited body fails the event schema' }),
  changes: z
    .array(z.object({ path: z.string(), change: z.enum(['added', 'removed', 'changed']), before: z.unknown().optional(), after: z.unknown().optional() }))
    .meta({ description: 'what the edit changed from the stored original, leaf by leaf' }),
  appliedWithoutMatch: z.string().nullable().meta({ description: "with ruleId: why the rule's filter does not match the edited body (it was applied anyway); null when it matches" }),
  ruleSetHash: z.string(),
  planned: z.array(PlannedSendSchema),
  deliveries: z.array(DeliverySchema),
});

export const ResendResultSchema = z.object({
  status: int.nullable().meta({ description: 'HTTP status of the answer; null when none came' }),
  durationMs: z.number(),
  responseExcerpt: z.string(),
  error: z.object({ code: z.string(), message: z.string() }).nullable().meta({ description: 'timeout, connection error, ...' }),
});

const RuleCountsSchema = z.object({ pending: int, delivered: int, dead: int });

const RuleOrderSchema = z
  .object({
    key: z.string().meta({ description: 'dot path into the event body whose value is the order key' }),
    maxBlockedForMs: int.optional(),
    onBlockedTimeout: z.enum(['dead-letter', 'keep-blocked']),
  })
  .meta({ id: 'RuleOrder', description: 'deliveries with the same key value go strictly in received order' });

export const BlockedKeysSchema = z
  .object({
    ruleId: z.string(),
    order: RuleOrderSchema.nullable().meta({ description: 'null: the rule is not ordered (no key is ever blocked)' }),
    blockedKeys: z.array(
      z.object({
        key: z.string(),
        overdue: z.boolean().meta({ description: 'blocked for longer than order.maxBlockedForMs' }),
        waiting: int.meta({ description: 'pending deliveries of the key behind its head' }),
        head: z.object({
          deliveryId: int,
          eventId: int,
          attempts: int,
          blockedSince: isoTime.meta({ description: "when the head's first failed attempt started" }),
          nextAttemptAt: isoTime.nullable(),
          lastStatus: int.nullable(),
          lastError: z.string().nullable(),
        }),
      }),
    ).meta({ description: 'longest blocked first' }),
  })
  .meta({ id: 'BlockedKeys', description: "an ordered rule's blocked keys: each key's failing head, and how many deliveries wait behind it" });
export type BlockedKeysView = z.infer<typeof BlockedKeysSchema>;

export const RuleStatusSchema = z
  .object({
    id: z.string(),
    description: z.string().optional(),
    file: z.string(),
    line: int,
    enabled: z.boolean(),
    on: z.array(z.string()),
    source: z.string().optional(),
    where: z.record(z.string(), z.unknown()),
    transform: z.string().optional(),
    to: z.object({ url: z.string(), method: z.enum(['POST', 'PUT', 'PATCH']), headers: z.record(z.string(), z.string()), forwardHeaders: z.array(z.string()) }),
    sign: z.object({ scheme: z.enum(['none', 'standard-webhooks', 'hmac-sha256-hex']), secret: z.string().optional(), header: z.string().optional() }),
    timeoutMs: int,
    retryScheduleMs: z.array(int),
    retryOn: z.array(int),
    concurrency: int.optional(),
    rateLimitPerSecond: z.number().optional(),
    redrive: z.object({ enabled: z.boolean(), maxPerSecond: z.number().optional() }).optional(),
    order: RuleOrderSchema.optional(),
    env: z.array(z.string()),
    counts: RuleCountsSchema,
  })
  .meta({ id: 'RuleStatus', description: 'the rule as written (secrets redacted, ${ENV} references unresolved) with its delivery counts' });

export const RulesSchema = z.object({
  hash: z.string(),
  loadedAt: isoTime,
  lastError: z.object({ at: isoTime, errors: z.array(z.string()).meta({ description: '`file:line path: message`' }) }).nullable(),
  warnings: z.array(z.string()),
  rules: z.array(RuleStatusSchema),
});

export const DryRunResultSchema = z.object({
  results: z.array(
    z.object({
      eventId: int,
      event: z.string().meta({ description: 'the event name' }),
      matched: z.boolean(),
      reason: z.string().nullable().meta({ description: 'why it did not match; null when it matched' }),
      body: z.string().optional().meta({ description: 'what would be sent (UTF-8 text)' }),
      contentType: z.string().optional(),
      deadReason: z.string().optional().meta({ description: 'the transform failed: the delivery would be dead-lettered with this reason' }),
      renderError: z.string().optional().meta({ description: 'deprecated: the same as deadReason', deprecated: true }),
    }),
  ),
});

export type EventSummaryView = z.output<typeof EventSummarySchema>;
export type EventListItemView = z.output<typeof EventListItemSchema>;
export type ForwardingView = z.output<typeof ForwardingSchema>;
export type EventDetailView = z.output<typeof EventDetailSchema>;
export type DeliveryView = z.output<typeof DeliverySchema>;
export type DeliveryWaitView = z.output<typeof DeliveryWaitSchema>;
export type DeliveryDetailView = z.output<typeof DeliveryDetailSchema>;
export type OutageView = z.output<typeof OutageSchema>;
export type JobView = z.output<typeof JobSchema>;
export type ResendResultView = z.output<typeof ResendResultSchema>;
export type ReplayResultView = z.output<typeof ReplayResultSchema>;
export type EditedReplayResultView = z.output<typeof EditedReplayResultSchema>;
export type RulesView = z.output<typeof RulesSchema>;
export type DryRunResultView = z.output<typeof DryRunResultSchema>;
export type StreamedEventView = z.output<typeof StreamedEventSchema>;

export const DestinationsSchema = z.object({
  adaptive: z.boolean().meta({ description: 'false when `delivery.adaptive` pins every limit at its ceiling' }),
  destinations: z.array(
    z.object({
      destination: z.string().meta({ description: 'origin (scheme, host, port)' }),
      limit: int.meta({ description: 'attempts this node lets be in flight at once now' }),
      ceiling: int.meta({ description: 'the highest `concurrency` of the rules sending here (or `delivery.concurrency`)' }),
      inFlight: int,
      pausedUntil: isoTime.nullable().meta({ description: 'when the circuit breaker lets the next attempt through, or null when closed' }),
    }),
  ),
});
export type DestinationsView = z.output<typeof DestinationsSchema>;

export const ClusterNodeSchema = z
  .object({
    id: z.string().meta({ description: 'random per process start' }),
    host: z.string(),
    pid: int,
    role: z.enum(['all', 'receiver', 'worker']).meta({ description: '`all` receives and delivers, `receiver` has no delivery loop, `worker` receives no webhooks' }),
    version: z.string().meta({ description: 'the hookrelay version the node runs' }),
    ruleSetHash: z.string().nullable().meta({ description: 'the rule set the node routes with now' }),
    startedAt: isoTime,
    lastHeartbeat: isoTime.meta({ description: 'in the database clock on PostgreSQL, shown in the answering node\'s' }),
    self: z.boolean().meta({ description: 'true for the node that answered this request' }),
  })
  .meta({ id: 'ClusterNode' });

export const GoneNodeSchema = z
  .object({
    id: z.string(),
    host: z.string(),
    pid: int,
    role: z.enum(['all', 'receiver', 'worker']),
    version: z.string(),
    ruleSetHash: z.string().nullable().meta({ description: 'the rule set the node routed with last' }),
    startedAt: isoTime,
    state: z.enum(['left', 'missing']).meta({ description: '`left`: it stopped cleanly; `missing`: it stopped heartbeating (killed, crashed, or cut off from the database)' }),
    since: isoTime.meta({ description: 'when it left, or its last heartbeat' }),
  })
  .meta({ id: 'GoneNode', description: 'a node no longer live, kept in the registry for a day' });

export const ClusterWarningSchema = z
  .object({
    code: z.enum(['rule_sets_differ', 'versions_differ']),
    message: z.string(),
    values: z.record(z.string(), z.array(z.string())).meta({ description: 'each rule-set hash (or version) with the ids of the nodes that run it' }),
  })
  .meta({ id: 'ClusterWarning' });

export const ClusterSchema = z
  .object({
    nodes: z.array(ClusterNodeSchema).meta({ description: 'the live nodes (heartbeat younger than three of their intervals), oldest first' }),
    gone: z.array(GoneNodeSchema).meta({ description: 'up to 20 nodes that left or went missing in the last day, most recent first' }),
    warnings: z.array(ClusterWarningSchema),
  })
  .meta({ id: 'Cluster' });

export type ClusterView = z.output<typeof ClusterSchema>;

export const ReadinessSchema = z
  .object({
    status: z.enum(['ready', 'not_ready']),
    checks: z
      .record(z.string(), z.unknown())
      .meta({ description: '`startup` ("starting" until every part has started, then "complete"), `store` ("ok" or why the latest commit or probe failed or timed out), `rules` (hash, rule count, load time, last reload error), `role`, and on a node that delivers `delivery` (where its worker runs: `thread`, `event loop`, or `restarting` while the delivery thread is started again)' }),
  })
  .meta({ id: 'Readiness' });
