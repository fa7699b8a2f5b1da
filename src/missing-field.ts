/**
 * Whether `path` leads to nothing in `value`: a field that is absent (or undefined). zod words such a
 * field as "expected string, received undefined"; people read it as "required". Checked on the error
 * path only, by walking the input the issue came from, so the schemas carry no per-parse error map.
 */
export function isMissingAt(value: unknown, path: readonly PropertyKey[]): boolean {
  if (path.length === 0) return value === undefined;
  let current: unknown = value;
  for (const segment of path) {
    if (typeof current !== 'object' || current === null) return false; // a parent is wrong, not this field
    if (!Object.hasOwn(current, segment)) return true;
    current = (current as Record<PropertyKey, unknown>)[segment];
  }
  return current === undefined;
}
