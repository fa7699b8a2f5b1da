/** One step of a field path: a key, or the elements of an array. */
export type PathStep = { key: string } | { items: true } | { anyKey: true };

/** The parent path and last step of a field path (`a.b[]` → `a.b`, items); null for a top-level key's parent ''. */
export function lastStep(path: string): { parent: string; step: PathStep } {
  if (path.endsWith('[]')) return { parent: path.slice(0, -2), step: { items: true } };
  if (path.endsWith('"]')) {
    for (let i = path.lastIndexOf('["'); i >= 0; i = path.lastIndexOf('["', i - 1)) {
      try {
        const key = JSON.parse(path.slice(i + 1, -1)) as unknown;
        if (typeof key === 'string') return { parent: path.slice(0, i), step: { key } };
      } catch {
        // Not the opening of this key: an earlier one is.
      }
      if (i === 0) break;
    }
  }
  if (path === '*' || path.endsWith('.*')) return { parent: path.slice(0, -2), step: { anyKey: true } };
  const dot = path.lastIndexOf('.');
  return dot < 0 ? { parent: '', step: { key: path } } : { parent: path.slice(0, dot), step: { key: path.slice(dot + 1) } };
}

/** The path without array steps, as a rule's `where` (sift) names a field: `a[].b` → `a.b` (a map's `*` stays). */
export function queryPathOf(path: string): string {
  return path.replace(/\[\]/g, '');
}
