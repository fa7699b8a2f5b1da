import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { ruleJsonSchema, ruleJsonSchemaText } from '../../../src/rules/json-schema.js';

const committedPath = new URL('../../../docs/rules.schema.json', import.meta.url);

describe('rule JSON Schema', () => {
  it('is committed in docs/rules.schema.json exactly as generated (regenerate with `hookrelay rules schema`)', async () => {
    expect(await readFile(committedPath, 'utf8')).toBe(ruleJsonSchemaText());
  });

  it('describes a rule, or a list of rules, and rejects unknown keys', () => {
    const schema = ruleJsonSchema() as { anyOf: unknown[]; $defs: { Rule: { required: string[]; additionalProperties: boolean } } };
    expect(schema.anyOf).toEqual([{ $ref: '#/$defs/Rule' }, { type: 'array', items: { $ref: '#/$defs/Rule' } }]);
    expect(schema.$defs.Rule.required).toEqual(['id', 'on', 'to']);
    expect(schema.$defs.Rule.additionalProperties).toBe(false);
  });
});
