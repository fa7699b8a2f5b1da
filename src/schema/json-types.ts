import type { JsonType } from '../store/schema-store.js';

export type { JsonType };

export const JSON_TYPES: readonly JsonType[] = ['string', 'number', 'boolean', 'null', 'object', 'array'];

/** A set of JSON types as bits (bit i: JSON_TYPES[i]): what one body shows at a path, without allocating a Set. */
export type JsonTypeBits = number;

export const JSON_TYPE_BIT = Object.fromEntries(JSON_TYPES.map((type, i) => [type, 1 << i])) as Readonly<Record<JsonType, JsonTypeBits>>;

const TYPES_OF_BITS: readonly (readonly JsonType[])[] = Array.from({ length: 64 }, (_, bits) => Object.freeze(JSON_TYPES.filter((_, i) => (bits & (1 << i)) !== 0)));

/** The types in `bits`, in JSON_TYPES order (one shared frozen array per set). */
export function typesOfBits(bits: JsonTypeBits): readonly JsonType[] {
  return TYPES_OF_BITS[bits]!;
}

export function jsonTypeOf(value: unknown): JsonType {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  switch (typeof value) {
    case 'string':
      return 'string';
    case 'number':
      return 'number';
    case 'boolean':
      return 'boolean';
    default:
      return 'object';
  }
}
