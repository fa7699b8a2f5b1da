import type { EventFilter } from '../event-store.js';
import { keyParam, keyValue } from './key-text.js';

/**
 * Event name, source and validation: few values each, and one of them on nearly every row. Migration 004
 * indexes only the rows with a rare value (partial indexes); the common value is served by walking the
 * table newest first, where most rows match. SQLite uses a partial index only when the query repeats the
 * index's condition word for word, so a filter on a rare value carries that condition (`coarseTerm`).
 */
export interface CoarseColumn {
  key: 'event' | 'source' | 'validation' | 'quarantine';
  column: string;
  /** The value most rows have: not indexed. */
  common: string;
  /** The WHERE clause of the partial index that holds rare `value`, for table alias `alias`. */
  rareCondition: (alias: string, value: string) => string;
  /** True when the rare condition alone already says `column = value` (one partial index per rare value). */
  conditionIsTheValue: boolean;
}

export const COARSE_COLUMNS: readonly CoarseColumn[] = [
  { key: 'event', column: 'event', common: 'transfer:succeeded', rareCondition: (a) => `${a}.event <> 'transfer:succeeded'`, conditionIsTheValue: false },
  { key: 'source', column: 'source', common: 'checkout', rareCondition: (a) => `${a}.source <> 'checkout'`, conditionIsTheValue: false },
  // Two rare values, a partial index each (migration 008): unrecognised, and invalid (edited copies only).
  { key: 'validation', column: 'validation', common: 'valid', rareCondition: (a, value) => `${a}.validation = '${value === 'invalid' ? 'invalid' : 'unrecognised'}'`, conditionIsTheValue: true },
  // Most events are never held (NULL, which no filter asks for): both states are rare, a partial index each (migration 015).
  { key: 'quarantine', column: 'quarantine', common: '', rareCondition: (a, value) => `${a}.quarantine = '${value === 'released' ? 'released' : 'held'}'`, conditionIsTheValue: true },
];

export interface CoarseTerm {
  sql: string;
  params: unknown[];
  /** A rare value: its partial index can drive the query. */
  indexed: boolean;
}

/** `alias.column = value`, plus the partial index's condition when the value is a rare one. */
export function coarseTerm(spec: CoarseColumn, value: string, alias: string): CoarseTerm {
  const param = keyParam(spec.column);
  const bound = keyValue(spec.column, value);
  if (value === spec.common) return { sql: `${alias}.${spec.column} = ${param}`, params: [bound], indexed: false };
  if (spec.conditionIsTheValue) return { sql: spec.rareCondition(alias, value), params: [], indexed: true };
  return { sql: `${alias}.${spec.column} = ${param} AND ${spec.rareCondition(alias, value)}`, params: [bound], indexed: true };
}

/** The coarse filters given, each with its term on `alias`. */
export function coarseTerms(filter: EventFilter, alias: string): (CoarseTerm & { spec: CoarseColumn })[] {
  return COARSE_COLUMNS.flatMap((spec) => {
    const value = filter[spec.key];
    return value === undefined ? [] : [{ spec, ...coarseTerm(spec, value, alias) }];
  });
}
