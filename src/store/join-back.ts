/**
 * Joining the back of an ordered key: a delivery of an ordered rule that is made pending again (retry, bulk
 * retry, outage redrive or probe) takes a place after every pending row of its (rule, key), so it never
 * overtakes a row that waited meanwhile. Rows that rejoin together take their places in ascending id order,
 * that is in the order they were first planned. Rows of unordered rules have no place and are left alone.
 * Each backend supplies only the primitive that gives one row the next place of its key.
 */

/** Rows that rejoin together, in the order they take their places: ascending id, each once. */
export function rejoinOrder<T extends { id: number }>(rows: readonly T[]): T[] {
  const seen = new Set<number>();
  return [...rows].sort((a, b) => a.id - b.id).filter((row) => !seen.has(row.id) && seen.add(row.id));
}

/** Gives each of `ids` the back place of its key, in rejoin order; `takeBackPlace` skips unordered or non-pending rows. */
export function joinBackOfKeys(ids: readonly number[], takeBackPlace: (id: number) => void): void {
  for (const { id } of rejoinOrder(ids.map((id) => ({ id })))) takeBackPlace(id);
}
