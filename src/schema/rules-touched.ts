import type { RuleDescription } from '../rules/types.js';
import type { NewDrift } from '../store/schema-store.js';
import { queryPathOf } from './schema-paths.js';

/** The rules a drift may break: those whose `where` reads the field, and (a guess) those whose transform names it. */
export interface RulesTouched {
  where: string[];
  /** Best effort: the transform's text names the field's last key. JSONata paths are not resolved. */
  transform: string[];
}

/** Every field path a Mongo-style `where` reads (operators and their nesting followed; `$where`-like code is not read). */
export function wherePaths(where: unknown, prefix = ''): string[] {
  if (where === null || typeof where !== 'object') return [];
  if (Array.isArray(where)) return where.flatMap((item) => wherePaths(item, prefix));
  const out: string[] = [];
  for (const [key, value] of Object.entries(where)) {
    if (key.startsWith('$')) {
      // $and/$or/$nor hold queries; $elemMatch holds a query on the elements; other operators hold values.
      if (key === '$and' || key === '$or' || key === '$nor' || key === '$not') out.push(...wherePaths(value, prefix));
      else if (key === '$elemMatch') out.push(...wherePaths(value, prefix));
      continue;
    }
    const path = prefix === '' ? key : `${prefix}.${key}`;
    out.push(path);
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) out.push(...wherePaths(value, path).filter((p) => p !== path));
  }
  return out;
}

function related(a: string, b: string): boolean {
  return a === b || a.startsWith(`${b}.`) || b.startsWith(`${a}.`);
}

function lastKey(path: string): string {
  const bare = queryPathOf(path);
  return bare.slice(bare.lastIndexOf('.') + 1);
}

/** Rules of the drift's event (and source) whose filter reads the drifted field or a field inside or around it. */
export function rulesTouchedBy(drift: Pick<NewDrift, 'source' | 'event' | 'path'>, rules: readonly RuleDescription[]): RulesTouched {
  const touched: RulesTouched = { where: [], transform: [] };
  if (drift.path === '') return touched;
  const field = queryPathOf(drift.path);
  const key = lastKey(drift.path);
  const word = new RegExp(`(^|[^\\w$])${key.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}($|[^\\w$])`);
  for (const rule of rules) {
    if (!rule.on.includes(drift.event) && !rule.on.includes('*')) continue;
    if (rule.source !== undefined && rule.source !== drift.source) continue;
    if (wherePaths(rule.where).some((path) => related(path, field))) touched.where.push(rule.id);
    if (rule.transform !== undefined && word.test(rule.transform)) touched.transform.push(rule.id);
  }
  return touched;
}
