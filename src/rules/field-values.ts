/** Values at a dotted path, looking into arrays the way the query does (`items.sku` reads every item). */
export function valuesAt(value: unknown, segments: readonly string[]): unknown[] {
  const found: unknown[] = [];
  collect(value, segments, 0, found);
  return found;
}

// Walks by index into one result list: explain reads a path for every clause of every rule.
function collect(value: unknown, segments: readonly string[], index: number, found: unknown[]): void {
  if (index === segments.length) {
    if (value !== undefined) found.push(value);
    return;
  }
  const head = segments[index]!;
  if (Array.isArray(value)) {
    if (/^\d+$/.test(head)) collect(value[Number(head)], segments, index + 1, found);
    else for (const item of value) collect(item, segments, index, found);
    return;
  }
  if (typeof value !== 'object' || value === null) return;
  collect((value as Record<string, unknown>)[head], segments, index + 1, found);
}
