/** Values at a dotted path, looking into arrays the way the query does (`items.sku` reads every item). */
export function valuesAt(value: unknown, segments: readonly string[]): unknown[] {
  if (segments.length === 0) return value === undefined ? [] : [value];
  const [head, ...rest] = segments as [string, ...string[]];
  if (Array.isArray(value)) {
    if (/^\d+$/.test(head)) return valuesAt(value[Number(head)], rest);
    return value.flatMap((item) => valuesAt(item, segments));
  }
  if (typeof value !== 'object' || value === null) return [];
  return valuesAt((value as Record<string, unknown>)[head], rest);
}
