import ms from 'ms';

/** Parses a duration such as `10s`, `5m`, `2h` or a plain number of milliseconds; throws on anything else. */
export function parseDuration(value: string | number): number {
  if (typeof value === 'number') {
    if (!Number.isFinite(value) || value < 0) throw new Error(`invalid duration ${value}`);
    return value;
  }
  const parsed = ms(value.trim() as ms.StringValue);
  if (typeof parsed !== 'number' || !Number.isFinite(parsed) || parsed < 0) {
    throw new Error(`invalid duration "${value}" (use e.g. 500ms, 10s, 5m, 2h)`);
  }
  return parsed;
}
