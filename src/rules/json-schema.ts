import { z } from 'zod';
import { ruleFileSchema } from './schema.js';

/**
 * JSON Schema of a rule file for editors (yaml-language-server reads the `# yaml-language-server:
 * $schema=...` comment). Generated from the zod schema so the two cannot drift; `io: 'input'` because
 * editors see what people write, where defaulted keys are optional.
 */
export function ruleJsonSchema(): Record<string, unknown> {
  return z.toJSONSchema(ruleFileSchema, { io: 'input', target: 'draft-2020-12' }) as Record<string, unknown>;
}

/** The schema as committed in `docs/rules.schema.json`: pretty-printed, trailing newline. */
export function ruleJsonSchemaText(): string {
  return `${JSON.stringify(ruleJsonSchema(), null, 2)}\n`;
}
