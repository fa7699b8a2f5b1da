import type { z } from 'zod';
import { HookrelayError } from '../errors.js';
import { isMissingAt } from '../missing-field.js';
import type { Validation } from '../store/event-store.js';
import { EventEnvelopeSchema, KNOWN_EVENT_SCHEMAS, type EventEnvelope } from './event-schemas.js';

export interface ValidatedEvent {
  envelope: EventEnvelope;
  validation: Validation;
}

export interface SchemaIssue {
  path: string;
  message: string;
  code: string;
}

function toIssues(error: z.ZodError, input: unknown): SchemaIssue[] {
  return error.issues.map((issue) => ({
    path: issue.path.map(String).join('.') || '(root)',
    message: messageOf(issue, input),
    code: issue.code,
  }));
}

/** zod's message, except for a field that is absent: "required", with the type it should have. */
function messageOf(issue: z.core.$ZodIssue, input: unknown): string {
  if ((issue.code !== 'invalid_type' && issue.code !== 'invalid_union') || !isMissingAt(input, issue.path)) return issue.message;
  return issue.code === 'invalid_type' ? `required (expected ${issue.expected})` : 'required';
}

function invalid(error: z.ZodError, input: unknown, eventName?: string): HookrelayError {
  const issues = toIssues(error, input);
  const what = eventName ? `a valid ${eventName} event` : 'an event envelope {"event": string, "result": {"id": string, ...}}';
  return new HookrelayError('invalid_payload', `The body is not ${what}: ${issues.length} issue(s).`, { issues });
}

/** The full schema of a known event name; names such as "constructor" are not looked up on the prototype. */
function schemaFor(parsed: unknown): { name: string; schema: z.ZodType } | undefined {
  const name = typeof parsed === 'object' && parsed !== null ? (parsed as { event?: unknown }).event : undefined;
  return typeof name === 'string' && Object.hasOwn(KNOWN_EVENT_SCHEMAS, name) ? { name, schema: KNOWN_EVENT_SCHEMAS[name]! } : undefined;
}

/**
 * A known event is checked against its full schema alone (it implies the envelope): one pass on the hot path.
 * Only when that fails is the envelope checked, so that a body that is not even an envelope says so. Unknown
 * event names need only the envelope and pass as unrecognised.
 */
export function validateEvent(parsed: unknown): ValidatedEvent {
  const known = schemaFor(parsed);
  if (known) {
    const full = known.schema.safeParse(parsed);
    if (full.success) return { envelope: full.data as EventEnvelope, validation: 'valid' };
    const envelope = EventEnvelopeSchema.safeParse(parsed);
    throw envelope.success ? invalid(full.error, parsed, known.name) : invalid(envelope.error, parsed);
  }
  const envelope = EventEnvelopeSchema.safeParse(parsed);
  if (!envelope.success) throw invalid(envelope.error, parsed);
  return { envelope: envelope.data, validation: 'unrecognised' };
}
