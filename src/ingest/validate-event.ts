import type { z } from 'zod';
import { HookrelayError } from '../errors.js';
import type { Validation } from '../store/store.js';
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

function toIssues(error: z.ZodError): SchemaIssue[] {
  return error.issues.map((issue) => ({
    path: issue.path.map(String).join('.') || '(root)',
    message: issue.message,
    code: issue.code,
  }));
}

function invalid(error: z.ZodError, eventName?: string): HookrelayError {
  const issues = toIssues(error);
  const what = eventName ? `a valid ${eventName} event` : 'an event envelope {"event": string, "result": {"id": string, ...}}';
  return new HookrelayError('invalid_payload', `The body is not ${what}: ${issues.length} issue(s).`, { issues });
}

/** Checks the envelope, then the full schema of a known event; unknown event names pass as unrecognised. */
export function validateEvent(parsed: unknown): ValidatedEvent {
  const envelope = EventEnvelopeSchema.safeParse(parsed);
  if (!envelope.success) throw invalid(envelope.error);
  const schema = KNOWN_EVENT_SCHEMAS[envelope.data.event];
  if (!schema) return { envelope: envelope.data, validation: 'unrecognised' };
  const full = schema.safeParse(parsed);
  if (!full.success) throw invalid(full.error, envelope.data.event);
  return { envelope: envelope.data, validation: 'valid' };
}
