import { HookrelayError } from '../errors.js';
import type { PathSegment } from './query-validation.js';
import type { RuleFileError } from './types.js';

/** `file:line path: message`, or `file:line: message` when the problem is not inside a rule. */
export function formatRuleFileError(error: RuleFileError): string {
  return `${error.file}:${error.line}${error.path ? ` ${error.path}` : ''}: ${error.message}`;
}

/** `where.result.totalPriceUsd`, `retry.schedule[2]`, `[1].to.url` for the second rule of a list. */
export function formatPath(path: readonly PathSegment[]): string {
  return path.reduce<string>((text, segment) => {
    if (typeof segment === 'number') return `${text}[${segment}]`;
    return text ? `${text}.${segment}` : segment;
  }, '');
}

/** One error carrying every problem, for start-up and `rules check`: the message lists them one per line. */
export function invalidRulesError(errors: readonly RuleFileError[]): HookrelayError {
  const lines = errors.map(formatRuleFileError);
  const noun = lines.length === 1 ? 'problem' : 'problems';
  return new HookrelayError('invalid_rules', `Invalid rules (${lines.length} ${noun}):\n${lines.join('\n')}`, lines);
}
