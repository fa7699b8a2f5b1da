import type { Signing } from '../signing/scheme.js';

/** What a rule sees of one stored event: enough to match, transform and forward it. */
export interface RuleEventInput {
  source: string;
  event: string;
  /** The parsed JSON body (`{ event, result }` for checkout events). */
  body: unknown;
  /** The exact bytes received; forwarded untouched when the rule has no transform. */
  raw: Buffer;
}

export type HttpMethod = 'POST' | 'PUT' | 'PATCH';

export interface RenderedBody {
  body: Buffer;
  contentType: string;
}

/**
 * A validated rule with its filter and transform compiled and its `${ENV}` references resolved.
 * `destination` and `signing` hold resolved secrets for the delivery loop; `describe()` (also used by
 * `toJSON`) is the only view meant for logs, the API and the CLI.
 */
export interface CompiledRule {
  id: string;
  description?: string;
  /** The rule file as the loader was given it (e.g. `rules/fulfil.yaml`), and the line the rule starts on. */
  file: string;
  line: number;
  on: readonly string[];
  source?: string;
  enabled: boolean;
  destination: {
    url: string;
    method: HttpMethod;
    headers: Readonly<Record<string, string>>;
    /** Received headers passed on unchanged, lower case. */
    forwardHeaders: readonly string[];
  };
  signing: Signing;
  timeoutMs: number;
  /** Delay before each attempt; entry 0 is the first attempt, so the length is the attempt budget. */
  retryScheduleMs: readonly number[];
  /** 4xx statuses retried in addition to the always-retried 408, 425 and 429. */
  retryOn: readonly number[];
  concurrency?: number;
  rateLimitPerSecond?: number;
  /** The rule's own redrive choice; absent: `delivery.redrive` decides. */
  redrive?: RedriveChoice;
  /** Set when deliveries with the same key value must go in received order. */
  order?: RuleOrder;
  hasTransform: boolean;
  matches(input: RuleEventInput): boolean;
  render(input: RuleEventInput): Promise<RenderedBody>;
  describe(): RuleDescription;
  /** The rule as kept with its rule set in the store (no resolved values, no literal secrets). */
  kept: KeptRule;
  /**
   * A kept version only: why its filter or transform cannot be evaluated on this version (a regex the
   * linear-time engine cannot run). It is still sent as planned; it is never matched or rendered.
   */
  unavailable?: string;
}

/** A rule as written in its file: `${ENV}` references unresolved, literal secrets redacted. */
export interface RuleDescription {
  id: string;
  description?: string;
  file: string;
  line: number;
  enabled: boolean;
  on: readonly string[];
  source?: string;
  where: Record<string, unknown>;
  transform?: string;
  to: { url: string; method: HttpMethod; headers: Record<string, string>; forwardHeaders: string[] };
  sign: { scheme: Signing['scheme']; secret?: string; header?: string };
  timeoutMs: number;
  retryScheduleMs: readonly number[];
  retryOn: readonly number[];
  concurrency?: number;
  rateLimitPerSecond?: number;
  redrive?: RedriveChoice;
  order?: RuleOrder;
  /** Names of the environment variables the rule reads. */
  env: string[];
}

/** A rule's `redrive:` option: off, or on at an optional rate of its own. */
export interface RedriveChoice {
  enabled: boolean;
  maxPerSecond?: number;
}

/** What happens when a key's head has blocked it for `maxBlockedForMs`. */
export type BlockedTimeoutAction = 'dead-letter' | 'keep-blocked';

/** A rule's `order` option, durations in ms. */
export interface RuleOrder {
  /** Dot path into the event body (`result.checkoutId`). */
  key: string;
  maxBlockedForMs?: number;
  onBlockedTimeout: BlockedTimeoutAction;
}

export interface RuleSet {
  rules: CompiledRule[];
  /** Short hex sha256 of the sorted file names and contents: identifies this exact set of files. */
  hash: string;
  loadedAt: Date;
  files: string[];
}

/** One problem in one rule file; `formatRuleFileError` renders it as `file:line path: message`. */
export interface RuleFileError {
  file: string;
  line: number;
  /** Dotted path inside the rule (`where.result.totalPriceUsd`, `retry.schedule[2]`), '' for the whole file. */
  path: string;
  message: string;
}

export type LoadResult =
  | { ok: true; ruleSet: RuleSet; warnings: string[] }
  | { ok: false; errors: RuleFileError[]; warnings: string[] };

/**
 * A rule as it is kept with its rule set (by the rule set's hash, in the store): its definition as written,
 * defaults filled in, `${ENV}` references unresolved, so the node that sends a delivery resolves them from
 * its own environment. A secret written literally in a rule file (a signing secret, a value of an
 * Authorization-like header) is never kept: it is replaced by LITERAL_SECRET, and an older version takes
 * that value from today's version of the rule.
 */
export interface KeptRule {
  id: string;
  file: string;
  line: number;
  definition: Record<string, unknown>;
}
