import { describe, expect, it } from 'vitest';
import { envReferenceNames, resolveTemplate, templateSyntaxError } from '../../../src/rules/env-references.js';

describe('env references', () => {
  it('replaces every ${NAME} from the env object passed in', () => {
    expect(resolveTemplate('Bearer ${TOKEN}', { TOKEN: 's3cr3t' })).toEqual({ ok: true, value: 'Bearer s3cr3t' });
    expect(resolveTemplate('https://${HOST}/x?k=${KEY}', { HOST: 'h.example', KEY: 'k' })).toEqual({ ok: true, value: 'https://h.example/x?k=k' });
    expect(resolveTemplate('no references', {})).toEqual({ ok: true, value: 'no references' });
  });

  it('names every unset or empty variable', () => {
    expect(resolveTemplate('${A}${B}${C}', { B: 'b', C: '' })).toEqual({ ok: false, missing: ['A', 'C'] });
  });

  it('lists referenced names once, in order', () => {
    expect(envReferenceNames('${B} ${A} ${B}')).toEqual(['B', 'A']);
  });

  it('rejects malformed references', () => {
    expect(templateSyntaxError('${TOKEN}')).toBeNull();
    expect(templateSyntaxError('Bearer ${TOKEN')).toBe('"${" is not closed with "}"');
    expect(templateSyntaxError('${1BAD}')).toMatch(/is not a valid environment variable reference/);
    expect(templateSyntaxError('${}')).toMatch(/is not a valid environment variable reference/);
  });
});
