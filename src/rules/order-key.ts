import { eventText } from '../store/storable-text.js';
import type { RuleOrder } from './types.js';

/** The longest order key kept; longer values are cut (they still group the same events together). */
const MAX_ORDER_KEY_LENGTH = 512;

/**
 * The value at a rule's order key path in an event body, as text: a string, a finite number or a boolean.
 * Anything else (missing, null, an object or an array) gives null: that event's delivery is unordered, so
 * an event without the field never waits behind, or blocks, anyone. A string is kept as storable text
 * (storable-text.ts): one with a NUL or a lone surrogate in it is written in its escaped form.
 */
export function orderKeyOf(order: RuleOrder, body: unknown): string | null {
  let value: unknown = body;
  for (const segment of order.key.split('.')) {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
    value = (value as Record<string, unknown>)[segment];
  }
  // In the form both stores keep exactly: a NUL or a lone surrogate (also one the cut leaves) stays distinct.
  if (typeof value === 'string') return value === '' ? null : eventText(value.slice(0, MAX_ORDER_KEY_LENGTH));
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  if (typeof value === 'boolean') return String(value);
  return null;
}
