import sift from 'sift';
import { ALLOWED_OPERATORS, validateQuery, type QueryIssue } from './query-validation.js';
import { compileLinearRegex, RegexUnavailableError, type RegexMode } from './regex-engine.js';
import type { RuleEventInput } from './types.js';

export type Tester = (item: unknown) => boolean;

export interface MatchCriteria {
  on: readonly string[];
  source?: string;
  where: Record<string, unknown>;
  enabled: boolean;
}

export interface RuleMatcher {
  matches(input: RuleEventInput): boolean;
}

export type MatcherCompilation =
  | { ok: true; matcher: RuleMatcher; /** `kept` mode: why the filter cannot be evaluated (a regex the engine cannot run) */ unavailable?: string }
  | { ok: false; issues: QueryIssue[] };

type Operation = (...args: never[]) => unknown;

/**
 * `$regex` on the linear-time engine (sift's own builds a JavaScript RegExp, which backtracks). In `kept`
 * mode a pattern the engine cannot run still compiles, into a test that throws instead of running it.
 */
function regexOperation(mode: RegexMode): Operation {
  return ((pattern: string, ownerQuery: Record<string, unknown>, options: unknown) => {
    const flags = typeof ownerQuery.$options === 'string' ? ownerQuery.$options : '';
    const compiled = compileLinearRegex(pattern, flags);
    let test: (value: unknown) => boolean;
    if (compiled.ok) test = (value) => typeof value === 'string' && compiled.test(value);
    else if (mode === 'kept') {
      test = () => {
        throw new RegexUnavailableError(`$regex "${pattern}" ${compiled.message}`);
      };
    } else throw new Error(`$regex "${pattern}" ${compiled.message}`);
    return sift.createEqualsOperation(test, ownerQuery, options as never);
  }) as Operation;
}

// sift's default set minus $where, which would evaluate strings from the rule file as code.
function operationsFor(mode: RegexMode): Record<string, Operation> {
  const operations = Object.fromEntries(ALLOWED_OPERATORS.map((name) => [name, (sift as unknown as Record<string, Operation>)[name]!]));
  return { ...operations, $regex: regexOperation(mode) };
}

const OPERATIONS: Record<RegexMode, Record<string, Operation>> = { new: operationsFor('new'), kept: operationsFor('kept') };

/** A sift tester with the allowed operators only; throws for a query sift cannot compile. */
export function compileQuery(query: Record<string, unknown>, mode: RegexMode = 'new'): Tester {
  return sift.createQueryTester(query, { operations: OPERATIONS[mode] as never }) as Tester;
}

/**
 * Compiles `on`, `source` and `where` once, at load; matching an event is then synchronous and cheap. In
 * `kept` mode a regex the engine cannot run is not an issue: the matcher compiles, says so in
 * `unavailable`, and throws if it is ever evaluated.
 */
export function compileMatcher(criteria: MatchCriteria, mode: RegexMode = 'new'): MatcherCompilation {
  const found = validateQuery(criteria.where);
  const deferred = mode === 'kept' ? found.filter((issue) => issue.unrunnableRegex) : [];
  const issues = found.filter((issue) => !deferred.includes(issue));
  if (issues.length > 0) return { ok: false, issues };
  let whole: Tester;
  try {
    whole = compileQuery(criteria.where, mode);
  } catch (err) {
    return { ok: false, issues: [{ path: [], message: (err as Error).message }] };
  }
  const takesEvent = (event: string) => criteria.on.includes('*') || criteria.on.includes(event);
  const takesSource = (source: string) => criteria.source === undefined || criteria.source === source;

  return {
    ok: true,
    matcher: {
      matches: (input) => criteria.enabled && takesEvent(input.event) && takesSource(input.source) && whole(input.body),
    },
    ...(deferred.length > 0 && { unavailable: deferred.map((issue) => issue.message).join('; ') }),
  };
}

/** A value in one short line of JSON, for messages. */
export function preview(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}
