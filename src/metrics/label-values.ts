/**
 * Label values must come from a small, known set: every distinct value is a new time series kept in
 * memory for the life of the process. Request-supplied names are therefore mapped onto bounded sets.
 */

/** Stands for "anything else": cannot be a source name (those start with a letter or digit). */
export const OTHER_LABEL = '_other';

/** Configured sources keep their name; a path naming no configured source is one label, not one per path. */
export function sourceLabeller(configured: Iterable<string>): (source: string) => string {
  const known = new Set(configured);
  return (source) => (known.has(source) ? source : OTHER_LABEL);
}

/**
 * Known event names always get their own label; the first `maxUnknown` other names seen get one too, and
 * every later new name is counted under `_other`. Refusals before the name is known are labelled "".
 */
export function eventLabeller(knownNames: Iterable<string>, maxUnknown: number): (event: string | null) => string {
  const known = new Set(knownNames);
  const admitted = new Set<string>();
  return (event) => {
    if (event === null) return '';
    if (known.has(event) || admitted.has(event)) return event;
    if (admitted.size < maxUnknown) {
      admitted.add(event);
      return event;
    }
    return OTHER_LABEL;
  };
}

/**
 * Destination origins come from the rules, not from requests, but a rule set can name many: the gauges per
 * destination cover the first this many the worker has attempted recently, and no more.
 */
export const MAX_DESTINATION_LABELS = 100;
