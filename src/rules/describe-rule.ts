import { envReferenceNames, hasEnvReferences } from './env-references.js';
import type { RuleDefinition } from './schema.js';
import type { RedriveChoice, RuleDescription, RuleOrder } from './types.js';

/**
 * The rule as written in its file, safe to log, print and serve: `${ENV}` references stay unresolved,
 * and a secret written literally (a signing secret, an Authorization-like header) is redacted.
 */

const REDACTED = '[redacted]';
export const SENSITIVE_HEADER = /auth|cookie|token|secret|key|signature|password/i;
/** `scheme://user:password@` at the start of a URL. */
const URL_CREDENTIALS = /^([a-z][a-z0-9+.-]*:\/\/)([^/?#]*)@/i;

/** A URL's `user:password@` part, written literally, is redacted; one made only of `${ENV}` references is not a secret. */
export function maskUrlCredentials(url: string): string {
  return url.replace(URL_CREDENTIALS, (whole, scheme: string, credentials: string) =>
    credentials.replace(/\$\{[^}]*\}|:/g, '') === '' ? whole : `${scheme}${REDACTED}@`,
  );
}

export function describeRule(
  def: RuleDefinition,
  location: { file: string; line: number },
  durations: { timeoutMs: number; retryScheduleMs: readonly number[]; order?: RuleOrder },
): RuleDescription {
  const headers = Object.fromEntries(
    Object.entries(def.to.headers ?? {}).map(([name, value]) => [
      name,
      SENSITIVE_HEADER.test(name) && !hasEnvReferences(value) ? REDACTED : value,
    ]),
  );
  const sign: RuleDescription['sign'] = { scheme: def.sign.scheme };
  if (def.sign.scheme !== 'none') sign.secret = hasEnvReferences(def.sign.secret) ? def.sign.secret : REDACTED;
  if (def.sign.scheme === 'hmac-sha256-hex') sign.header = def.sign.header;

  const templates = [def.to.url, ...Object.values(def.to.headers ?? {}), def.sign.scheme === 'none' ? '' : def.sign.secret];
  return {
    id: def.id,
    ...(def.description !== undefined && { description: def.description }),
    file: location.file,
    line: location.line,
    enabled: def.enabled,
    on: [...def.on],
    ...(def.source !== undefined && { source: def.source }),
    where: structuredClone(def.where), // a copy: the compiled query holds the original
    ...(def.transform !== undefined && { transform: def.transform }),
    to: { url: maskUrlCredentials(def.to.url), method: def.to.method, headers, forwardHeaders: [...def.to.forwardHeaders] },
    sign,
    timeoutMs: durations.timeoutMs,
    retryScheduleMs: [...durations.retryScheduleMs],
    retryOn: [...def.retry.retryOn],
    ...(def.concurrency !== undefined && { concurrency: def.concurrency }),
    ...(def.rateLimit !== undefined && { rateLimitPerSecond: def.rateLimit.perSecond }),
    ...(def.redrive !== undefined && { redrive: redriveChoice(def.redrive) }),
    ...(durations.order !== undefined && { order: { ...durations.order } }),
    env: [...new Set(templates.flatMap(envReferenceNames))],
  };
}

/** `redrive: true | false | { maxPerSecond }` as the worker reads it. */
export function redriveChoice(value: boolean | { maxPerSecond: number }): RedriveChoice {
  return typeof value === 'boolean' ? { enabled: value } : { enabled: true, maxPerSecond: value.maxPerSecond };
}
