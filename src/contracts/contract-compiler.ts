import { createRequire } from 'node:module';
import type { ErrorObject, ValidateFunction } from 'ajv';
import type { FormatsPlugin } from 'ajv-formats';
import type { Ajv2020 as Ajv2020Class } from 'ajv/dist/2020.js';
import { compileLinearRegex } from '../rules/regex-engine.js';
import type { StoredIssue } from '../store/quarantine-store.js';

const require = createRequire(import.meta.url);

/** The top-level keys that name a contract's (source, event) and mode: annotations to the validator. */
export const CONTRACT_KEYS = ['x-hookrelay-source', 'x-hookrelay-event', 'x-hookrelay-mode'] as const;

/** Violations kept per event (the first ones found); a body failing in more places is summed up by the count. */
export const MAX_KEPT_ISSUES = 20;

/**
 * `pattern` keywords run in the rules' linear-time engine (RE2 semantics): a contract is checked on the path that
 * acknowledges webhooks, so no pattern may backtrack on a sender's body.
 */
function linearRegExp(pattern: string, flags: string): { test: (text: string) => boolean } {
  const compiled = compileLinearRegex(pattern, flags.replace('u', ''));
  if (!compiled.ok) throw new Error(`pattern ${JSON.stringify(pattern)}: ${compiled.message}`);
  return { test: compiled.test };
}
linearRegExp.code = 'linearRegExp';

let validator: Ajv2020Class | undefined;

/** One JSON Schema (draft 2020-12) validator for every contract; loaded with the first contract. */
function ajv(): Ajv2020Class {
  if (validator) return validator;
  const { Ajv2020 } = require('ajv/dist/2020.js') as typeof import('ajv/dist/2020.js');
  const addFormats = require('ajv-formats') as FormatsPlugin;
  validator = new Ajv2020({ allErrors: true, allowUnionTypes: true, code: { regExp: linearRegExp }, keywords: [...CONTRACT_KEYS] });
  addFormats(validator);
  return validator;
}

/** Compiles a contract's schema once; throws with the validator's message when the schema is not valid. */
export function compileContract(schema: object): ValidateFunction {
  // Each load compiles afresh: a schema edited under the same $id must not meet its previous version.
  const compiler = ajv();
  const { $id: _id, ...withoutId } = schema as Record<string, unknown>;
  return compiler.compile(withoutId);
}

/** The validator's errors as the issues kept with an event (JSON Pointer paths become dotted ones, as zod's). */
export function contractIssues(errors: readonly ErrorObject[] | null | undefined): StoredIssue[] {
  return (errors ?? []).slice(0, MAX_KEPT_ISSUES).map((e) => ({
    path: e.instancePath.split('/').slice(1).map((part) => part.replaceAll('~1', '/').replaceAll('~0', '~')).join('.') || '(root)',
    message: e.message ?? e.keyword,
    code: e.keyword,
  }));
}
