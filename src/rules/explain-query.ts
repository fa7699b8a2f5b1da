import { valuesAt } from './field-values.js';
import { compileQuery, type Tester } from './matcher.js';

/**
 * A `where` query taken apart into a tree of clauses, each judged by sift itself (the matcher's own
 * engine), so an explanation can never disagree with the matcher: a node's `pass` is sift's verdict on
 * exactly that part of the query. Compiled once per rule; evaluating it is then cheap.
 */

/** One clause of a query and its verdict on one event. */
export interface ClauseExplanation {
  /** Field path the clause reads (`result.totalPriceUsd`); inside `$elemMatch`, relative to the element. Absent for `$and`/`$or`/`$nor`. */
  path?: string;
  /**
   * The query operator; `$eq` for a plain value, `$and` also for several conditions on one field (all must
   * hold), and `element` for one array element judged by the `$elemMatch` above it.
   */
  operator: string;
  /** The value the rule compares with (`$regex` with `$options`: both). Absent where `children` say it all. */
  expected?: unknown;
  /** The value at `path` (a list when the path reads through an array); absent when `absent` is true. */
  found?: unknown;
  /** True when the event has no value at `path`. */
  absent?: boolean;
  pass: boolean;
  /** The branches of `$and`, `$or`, `$nor`, `$not`, several conditions, or one entry per array element of `$elemMatch`. */
  children?: ClauseExplanation[];
}

interface ClausePlan {
  path?: string;
  /** Segments of `path` to read the found value with; [] reads the value itself (an array element). */
  read?: string[];
  operator: string;
  expected?: unknown;
  test: Tester;
  children: ClausePlan[];
  /** `$elemMatch`: how each element of the array found is judged. */
  element?: { test: Tester; clauses: ClausePlan[] };
}

export interface QueryPlan {
  clauses: ClausePlan[];
}

/** Elements of an array shown under `$elemMatch`; the verdict still covers all of them. */
export const MAX_ELEMENTS_SHOWN = 20;

const LOGICAL = new Set(['$and', '$or', '$nor']);
const isOperator = (key: string): boolean => key.startsWith('$');
const isPlainObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const isCondition = (value: unknown): value is Record<string, unknown> => isPlainObject(value) && Object.keys(value).some(isOperator);

/** Compiles a validated query (the matcher has already accepted it). */
export function compileQueryPlan(query: Record<string, unknown>): QueryPlan {
  return { clauses: queryClauses(query) };
}

/** sift holds a query's top-level keys together as an implicit `$and`: the query passes when every clause does. */
export function explainQuery(plan: QueryPlan, document: unknown): { pass: boolean; clauses: ClauseExplanation[] } {
  const clauses = plan.clauses.map((clause) => evaluate(clause, document));
  return { pass: clauses.every((clause) => clause.pass), clauses };
}

function queryClauses(query: Record<string, unknown>): ClausePlan[] {
  return Object.entries(query).map(([key, value]) => {
    if (LOGICAL.has(key) && Array.isArray(value)) {
      return { operator: key, test: compileQuery({ [key]: value }), children: value.map((item) => allOf(item as Record<string, unknown>)) };
    }
    if (isOperator(key)) return conditionClauses('', { [key]: value })[0]!;
    return fieldClause(key, value);
  });
}

/** One item of `$and`/`$or`/`$nor`: its only clause, or all its clauses under an implicit `$and`. */
function allOf(query: Record<string, unknown>): ClausePlan {
  const clauses = queryClauses(query);
  if (clauses.length === 1) return clauses[0]!;
  return { operator: '$and', test: compileQuery(query), children: clauses };
}

function fieldClause(path: string, condition: unknown): ClausePlan {
  const read = path.split('.');
  if (!isCondition(condition)) return { path, read, operator: '$eq', expected: condition, test: compileQuery({ [path]: condition }), children: [] };
  const clauses = conditionClauses(path, condition);
  if (clauses.length === 1) return clauses[0]!;
  return { path, read, operator: '$and', test: compileQuery({ [path]: condition }), children: clauses };
}

/** The operators of one condition on `path` ('' = the value itself, inside `$elemMatch`). */
function conditionClauses(path: string, condition: Record<string, unknown>): ClausePlan[] {
  const read = path === '' ? [] : path.split('.');
  const shown = path === '' ? {} : { path };
  const tester = (part: Record<string, unknown>): Tester => compileQuery(path === '' ? part : { [path]: part });
  return Object.entries(condition)
    .filter(([operator]) => operator !== '$options') // judged together with its $regex
    .map(([operator, operand]): ClausePlan => {
      if (operator === '$not' && isPlainObject(operand)) {
        return { ...shown, read, operator, test: tester({ $not: operand }), children: conditionClauses(path, operand) };
      }
      if (operator === '$elemMatch' && isPlainObject(operand)) {
        const clauses = Object.keys(operand).every(isOperator) ? conditionClauses('', operand) : queryClauses(operand);
        return { ...shown, read, operator, expected: operand, test: tester({ $elemMatch: operand }), children: [], element: { test: compileQuery(operand), clauses } };
      }
      if (operator === '$regex' && condition.$options !== undefined) {
        const regex = { $regex: operand, $options: condition.$options };
        return { ...shown, read, operator, expected: regex, test: tester(regex), children: [] };
      }
      return { ...shown, read, operator, expected: operand, test: tester({ [operator]: operand }), children: [] };
    });
}

function evaluate(plan: ClausePlan, document: unknown): ClauseExplanation {
  const result: ClauseExplanation = { operator: plan.operator, pass: plan.test(document) };
  if (plan.path !== undefined) result.path = plan.path;
  if (plan.expected !== undefined) result.expected = plan.expected;
  let values: unknown[] = [];
  if (plan.read) {
    values = valuesAt(document, plan.read);
    if (values.length === 0) result.absent = true;
    else result.found = values.length === 1 ? values[0] : values;
  }
  if (plan.children.length > 0) result.children = plan.children.map((child) => evaluate(child, document));
  if (plan.element) result.children = elementResults(plan, plan.element, values);
  return result;
}

/** `$elemMatch`: one entry per element of the array(s) found, each with the element query's clauses. */
function elementResults(plan: ClausePlan, element: NonNullable<ClausePlan['element']>, values: unknown[]): ClauseExplanation[] {
  const elements = values.flatMap((value) => (Array.isArray(value) ? value : []));
  return elements.slice(0, MAX_ELEMENTS_SHOWN).map((item, index) => ({
    path: `${plan.path ?? ''}[${index}]`,
    operator: 'element',
    found: item,
    pass: element.test(item),
    children: element.clauses.map((clause) => evaluate(clause, item)),
  }));
}
