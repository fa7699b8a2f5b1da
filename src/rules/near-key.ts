import { z } from 'zod';
import type { PathSegment } from './did-you-mean.js';

/**
 * The keys `schema` allows for the object found at `path` inside `value`. Unions (the `sign` schemes)
 * contribute the options whose literal fields agree with the value, so `standard-webhooks` is never
 * offered `header`.
 */
export function allowedKeysAt(schema: z.ZodType, value: unknown, path: readonly PathSegment[]): string[] {
  const unwrapped = unwrap(schema);
  if (path.length === 0) return objectOptions(unwrapped, value).flatMap((option) => Object.keys(option.shape));
  const [head, ...rest] = path as [PathSegment, ...PathSegment[]];
  const child = isRecord(value) ? value[String(head)] : undefined;
  return objectOptions(unwrapped, value).flatMap((option) => {
    const field = option.shape[String(head)] as z.ZodType | undefined;
    return field === undefined ? [] : allowedKeysAt(field, child, rest);
  });
}

function unwrap(schema: z.ZodType): z.ZodType {
  if (schema instanceof z.ZodDefault || schema instanceof z.ZodOptional) return unwrap(schema.unwrap() as z.ZodType);
  return schema;
}

function objectOptions(schema: z.ZodType, value: unknown): z.ZodObject[] {
  if (schema instanceof z.ZodObject) return [schema];
  if (!(schema instanceof z.ZodUnion)) return [];
  const options = (schema.options as z.ZodType[]).map(unwrap).filter((option): option is z.ZodObject => option instanceof z.ZodObject);
  const agreeing = options.filter((option) => literalsAgree(option, value));
  return agreeing.length > 0 ? agreeing : options;
}

function literalsAgree(option: z.ZodObject, value: unknown): boolean {
  if (!isRecord(value)) return false;
  return Object.entries(option.shape).every(([key, field]) => !(field instanceof z.ZodLiteral) || field.values.has(value[key] as never));
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
