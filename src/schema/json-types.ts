import type { JsonType } from '../store/schema-store.js';

export type { JsonType };

export const JSON_TYPES: readonly JsonType[] = ['string', 'number', 'boolean', 'null', 'object', 'array'];

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
