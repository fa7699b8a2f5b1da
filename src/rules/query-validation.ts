import { didYouMean, type PathSegment } from './did-you-mean.js';
import { compileLinearRegex, REGEX_FLAGS } from './regex-engine.js';

/**
 * Checks a `where` query before sift compiles it, so a typo such as `$gtee` is a load error that names
 * its path, instead of sift's pathless "Unsupported operation" (or, worse, a query that never matches).
 */

export type { PathSegment };

export interface QueryIssue {
  /** Path of the object holding the problem, relative to `where`. */
  path: PathSegment[];
  /** Key the problem is about, when there is one (its line is the one reported). */
  key?: PathSegment;
  message: string;
  /** A pattern valid for a backtracking engine that the linear-time engine refuses (a kept rule version may hold one). */
  unrunnableRegex?: true;
}

const LITERAL_OPERATORS = new Set(['$eq', '$ne', '$gt', '$gte', '$lt', '$lte']);
const LIST_OPERATORS = new Set(['$in', '$nin', '$all']);
const LOGICAL_OPERATORS = new Set(['$and', '$or', '$nor']);
const OTHER_OPERATORS = new Set(['$exists', '$regex', '$options', '$size', '$mod', '$type', '$elemMatch', '$not']);
const FLAG_LIST = new RegExp(`^[${REGEX_FLAGS.join('')}]*$`);
const TYPE_ALIASES = new Set(['number', 'string', 'bool', 'array', 'null', 'timestamp']);

/** Every operator a rule may use; `$where` is left out on purpose because it runs code from the file. */
export const ALLOWED_OPERATORS: readonly string[] = [...LITERAL_OPERATORS, ...LIST_OPERATORS, ...LOGICAL_OPERATORS, ...OTHER_OPERATORS];

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isOperator(key: string): boolean {
  return key.startsWith('$');
}

/**
 * A query (`where`, `$elemMatch`, each item of `$and`/`$or`/`$nor`) may hold field paths and operators
 * side by side; a condition (the object under a field, or under `$not`) holds operators only.
 */
export function validateQuery(query: unknown, path: PathSegment[] = [], kind: 'query' | 'condition' = 'query'): QueryIssue[] {
  if (!isPlainObject(query)) return [{ path, message: 'must be an object of field paths and conditions' }];
  const keys = Object.keys(query);
  const operators = keys.filter(isOperator);
  const fields = keys.filter((key) => !isOperator(key));
  if (kind === 'condition' && operators.length > 0 && fields.length > 0) {
    return [{ path, message: `cannot mix operators (${operators.join(', ')}) and field names (${fields.join(', ')}) in one object` }];
  }
  const issues: QueryIssue[] = [];
  for (const key of keys) {
    const value = query[key];
    if (isOperator(key)) issues.push(...validateOperator(key, value, query, path));
    // An object with operators is a condition; one without is an exact value to compare with.
    else if (isPlainObject(value) && Object.keys(value).some(isOperator)) issues.push(...validateQuery(value, [...path, key], 'condition'));
  }
  return issues;
}

function validateOperator(name: string, value: unknown, owner: Record<string, unknown>, path: PathSegment[]): QueryIssue[] {
  const issue = (message: string): QueryIssue[] => [{ path, key: name, message: `${name} ${message}` }];
  if (name === '$where') return issue('is not allowed (it would run code from the rule file)');
  if (LITERAL_OPERATORS.has(name)) return [];
  if (LIST_OPERATORS.has(name)) return Array.isArray(value) ? [] : issue('needs a list of values');
  if (LOGICAL_OPERATORS.has(name)) {
    if (!Array.isArray(value) || value.length === 0) return issue('needs a non-empty list of conditions');
    return value.flatMap((item, index) => validateQuery(item, [...path, name, index]));
  }
  switch (name) {
    case '$exists':
      return typeof value === 'boolean' ? [] : issue('needs true or false');
    case '$regex':
      return regexIssues(value, path);
    case '$options':
      if (!('$regex' in owner)) return issue('only goes with $regex');
      return typeof value === 'string' && FLAG_LIST.test(value) ? [] : issue(`must be made of the flags ${REGEX_FLAGS.join(', ')}`);
    case '$size':
      return Number.isInteger(value) && (value as number) >= 0 ? [] : issue('needs a whole number >= 0');
    case '$mod':
      return Array.isArray(value) && value.length === 2 && value.every((n) => typeof n === 'number') && value[0] !== 0
        ? []
        : issue('needs [divisor, remainder] with a non-zero divisor');
    case '$type':
      return typeof value === 'string' && TYPE_ALIASES.has(value) ? [] : issue(`needs one of ${[...TYPE_ALIASES].join(', ')}`);
    case '$elemMatch':
      return isPlainObject(value) ? validateQuery(value, [...path, name]) : issue('needs an object');
    case '$not':
      return isPlainObject(value) ? validateQuery(value, [...path, name], 'condition') : issue('needs an object of conditions');
    default:
      return [{ path, key: name, message: `unknown operator ${name}${didYouMean(name, ALLOWED_OPERATORS)}` }];
  }
}

/** The pattern is judged alone: its flags are judged by the $options check. */
function regexIssues(pattern: unknown, path: PathSegment[]): QueryIssue[] {
  const located = (message: string): QueryIssue => ({ path, key: '$regex', message: `$regex ${message}` });
  if (typeof pattern !== 'string') return [located('needs a pattern string')];
  const compiled = compileLinearRegex(pattern);
  if (compiled.ok) return [];
  const issue = located(`${JSON.stringify(pattern)} ${compiled.message}`);
  return isJavaScriptRegex(pattern) ? [{ ...issue, unrunnableRegex: true }] : [issue];
}

function isJavaScriptRegex(pattern: string): boolean {
  try {
    // Compiled, never run: a pattern older versions accepted (they used JavaScript regexes) may be in a kept version.
    new RegExp(pattern);
    return true;
  } catch {
    return false;
  }
}
