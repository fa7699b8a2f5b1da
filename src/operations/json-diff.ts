/** One difference between two JSON values, at a dotted path (`result.items[0].sku`; '' for the whole value). */
export interface JsonChange {
  path: string;
  change: 'added' | 'removed' | 'changed';
  before?: unknown;
  after?: unknown;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

function join(path: string, key: string | number): string {
  if (typeof key === 'number') return `${path}[${key}]`;
  return path === '' ? key : `${path}.${key}`;
}

/** What changed from `before` to `after`, leaf by leaf, in the order the keys appear (before's, then after's new ones). */
export function diffJson(before: unknown, after: unknown, path = ''): JsonChange[] {
  if (isObject(before) && isObject(after)) {
    const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])];
    return keys.flatMap((key) => {
      if (!Object.hasOwn(after, key)) return [{ path: join(path, key), change: 'removed' as const, before: before[key] }];
      if (!Object.hasOwn(before, key)) return [{ path: join(path, key), change: 'added' as const, after: after[key] }];
      return diffJson(before[key], after[key], join(path, key));
    });
  }
  if (Array.isArray(before) && Array.isArray(after)) {
    const changes: JsonChange[] = [];
    for (let i = 0; i < Math.max(before.length, after.length); i += 1) {
      if (i >= after.length) changes.push({ path: join(path, i), change: 'removed', before: before[i] });
      else if (i >= before.length) changes.push({ path: join(path, i), change: 'added', after: after[i] });
      else changes.push(...diffJson(before[i], after[i], join(path, i)));
    }
    return changes;
  }
  return JSON.stringify(before) === JSON.stringify(after) ? [] : [{ path, change: 'changed', before, after }];
}
