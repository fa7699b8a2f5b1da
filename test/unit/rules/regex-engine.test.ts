import jsonata from 'jsonata';
import { afterEach, describe, expect, it } from 'vitest';
import { loadRuleSet } from '../../../src/rules/loader.js';
import { compileMatcher } from '../../../src/rules/matcher.js';
import { compileLinearRegex, LinearRegExp, RegexUnavailableError } from '../../../src/rules/regex-engine.js';
import { formatRuleFileError } from '../../../src/rules/rule-file-error.js';
import { compileTransform, TransformError } from '../../../src/rules/transform.js';
import { removeTempDirs } from '../../helpers/temp-dir.js';
import { makeRuleDir, purchaseInput, ruleYaml } from './rule-dir-fixture.js';

afterEach(removeTempDirs);

/** Thirty `a`s then `!`: JavaScript's backtracking engine takes seconds on `^(a+)+$` here, RE2 one pass. */
const CATASTROPHIC = `${'a'.repeat(30)}!`;

const sInput = (s: string) => purchaseInput({ event: 'x:regex', body: { event: 'x:regex', result: { id: 'r-1', s } } });

function whereMatches(where: Record<string, unknown>, s: string): boolean {
  const compiled = compileMatcher({ on: ['*'], where, enabled: true });
  if (!compiled.ok) throw new Error(JSON.stringify(compiled.issues));
  return compiled.matcher.matches(sInput(s));
}

async function render(expression: string, s: string): Promise<unknown> {
  const compiled = compileTransform(expression);
  if (!compiled.ok) throw new Error(compiled.message);
  return JSON.parse((await compiled.transform.render(sInput(s))).body.toString());
}

describe('the rule regex engine', () => {
  it('answers a catastrophic pattern correctly on the input that stalls a backtracking engine', async () => {
    expect(whereMatches({ 'result.s': { $regex: '^(a+)+$' } }, CATASTROPHIC)).toBe(false);
    expect(whereMatches({ 'result.s': { $regex: '^(a+)+$' } }, 'aaaa')).toBe(true);
    expect(await render('$contains(result.s, /^(a+)+$/)', CATASTROPHIC)).toBe(false);
    expect(await render('$contains(result.s, /^(a+)+!$/)', CATASTROPHIC)).toBe(true);
  });

  it('maps the flags i, m and s of $options, accepts u, refuses the rest', () => {
    expect(whereMatches({ 'result.s': { $regex: '^ABC$', $options: 'i' } }, 'abc')).toBe(true);
    expect(whereMatches({ 'result.s': { $regex: '^ABC$' } }, 'abc')).toBe(false);
    expect(whereMatches({ 'result.s': { $regex: '^b$', $options: 'm' } }, 'a\nb\nc')).toBe(true);
    expect(whereMatches({ 'result.s': { $regex: '^b$' } }, 'a\nb\nc')).toBe(false);
    expect(whereMatches({ 'result.s': { $regex: '^a.b$', $options: 's' } }, 'a\nb')).toBe(true);
    expect(whereMatches({ 'result.s': { $regex: '^a.b$' } }, 'a\nb')).toBe(false);
    expect(whereMatches({ 'result.s': { $regex: '^.$', $options: 'u' } }, '😀')).toBe(true);
    const refused = compileMatcher({ on: ['*'], where: { 'result.s': { $regex: 'a', $options: 'g' } }, enabled: true });
    expect(refused.ok ? [] : refused.issues.map((issue) => issue.message)).toEqual(['$options must be made of the flags i, m, s, u']);
    expect(compileLinearRegex('a', 'y')).toEqual({ ok: false, message: 'flag "y" is not supported (flags: i, m, s, u)' });
  });

  it('gives JSONata what RegExp gives it: groups, indices in UTF-16 units, every match, flags i and m', async () => {
    const cases: Array<[string, string, unknown]> = [
      ['$match(result.s, /(é+)(x)?/)', '😀 éé é', [{ match: 'éé', index: 3, groups: ['éé', null] }, { match: 'é', index: 6, groups: ['é', null] }]],
      ['$replace(result.s, /(\\w+)@(\\w+)/, "$2 at $1")', 'ann@x and bob@y', 'x at ann and y at bob'],
      ['$split(result.s, /[,;] */)', 'a, b;c', ['a', 'b', 'c']],
      ['$contains(result.s, /^B$/im)', 'a\nb', true],
      ['$contains(result.s, /^B$/m)', 'a\nb', false],
    ];
    for (const [expression, s, expected] of cases) {
      expect(await render(expression, s)).toEqual(expected);
      // The same answer as JSONata on JavaScript's RegExp, for patterns both engines read alike.
      const native = await jsonata(expression).evaluate({ result: { s } });
      expect(JSON.parse(JSON.stringify(native))).toEqual(expected);
    }
  });

  it('runs RegExp-shaped exec: lastIndex advances with g and resets after the last match', () => {
    const regex = new LinearRegExp(/a(b)?/g);
    expect(regex.exec('xa ab')).toMatchObject({ 0: 'a', 1: undefined, index: 1 });
    expect(regex.lastIndex).toBe(2);
    expect(regex.exec('xa ab')).toMatchObject({ 0: 'ab', 1: 'b', index: 3 });
    expect(regex.exec('xa ab')).toBeNull();
    expect(regex.lastIndex).toBe(0);
    expect(() => new LinearRegExp('(a)\\1')).toThrow(RegexUnavailableError);
  });

  it('answers plain-text patterns by string search exactly as the engine does, with and without i', () => {
    const patterns = ['@example\\.com$', '^BUY_', '^x\\$y$', 'a\\\\b', 'a.b', '^\\d', 'ab$', '^$', '', 'a$b', 'k', '^S$', 'Buy_with', '^ibuy', 'mark$', '^ask$'];
    const texts = ['buyer@example.com', 'buyer@EXAMPLE.Com', 'buyer@example.comx', 'BUY_WITH_CARD', 'buy_with_card', 'x$y', 'a\\b', 'axb', '1', 'ab\n', '', 'a$b'];
    // Case folding beyond ASCII: the Kelvin sign folds to k, the long s to s; the dotted capital I lower-cases to two characters.
    texts.push('\u212a', 'K', '\u017f', 's', 'S', '\u0130buy_with', 'é@example.COM', 'MAR\u212a', 'a\u017fK', 'ibuy', 'IBUY!', 'ma', '');
    for (const pattern of patterns) {
      for (const flags of ['', 's', 'u', 'i', 'iu', 'm']) {
        const compiled = compileLinearRegex(pattern, flags);
        if (!compiled.ok) continue;
        for (const text of texts) expect([pattern, flags, text, compiled.test(text)]).toEqual([pattern, flags, text, compiled.regex.test(text)]);
      }
    }
  });

  it('names the construct that only a backtracking engine runs', () => {
    const message = (pattern: string) => (compileLinearRegex(pattern) as { message: string }).message;
    expect(message('(a)\\1')).toBe('cannot run in linear time: a backreference (\\1) is not supported (rules use RE2 syntax)');
    expect(message('(?<x>a)\\k<x>')).toMatch(/a named backreference/);
    expect(message('a(?=b)')).toMatch(/a lookahead \(\?=/);
    expect(message('a(?!b)')).toMatch(/a lookahead \(\?!/);
    expect(message('(?<=a)b')).toMatch(/a lookbehind \(\?<=/);
    expect(message('(?<!a)b')).toMatch(/a lookbehind \(\?<!/);
    expect(compileLinearRegex('[(?=]').ok).toBe(true); // inside a class these are characters
    expect(compileLinearRegex('(?<name>a)\\\\1').ok).toBe(true); // an escaped backslash, then 1
  });
});

describe('a regex the engine cannot run', () => {
  async function loadErrors(files: Record<string, string>): Promise<string[]> {
    const dir = await makeRuleDir(files);
    const result = await loadRuleSet(dir.dir, {});
    expect(result.ok).toBe(false);
    return result.ok ? [] : result.errors.map(formatRuleFileError);
  }

  it('is refused at load in a where, with file:line and path', async () => {
    const where = 'where:\n  result.email:\n    $regex: "^(\\\\w)\\\\1"\n  result.id: { $not: { $regex: "x(?=y)" } }\n';
    expect(await loadErrors({ 'a.yaml': ruleYaml('a', where) })).toEqual([
      'a.yaml:7 where.result.email: $regex "^(\\\\w)\\\\1" cannot run in linear time: a backreference (\\1) is not supported (rules use RE2 syntax)',
      'a.yaml:8 where.result.id.$not: $regex "x(?=y)" cannot run in linear time: a lookahead (?=...) is not supported (rules use RE2 syntax)',
    ]);
  });

  it('is refused at load in a transform, on the line of the literal', async () => {
    const transform = 'transform: |\n  {\n    "email": result.email,\n    "ok": $contains(result.email, /(?<!x)@/)\n  }\n';
    expect(await loadErrors({ 't.yaml': ruleYaml('t', transform) })).toEqual([
      't.yaml:8 transform: regular expression /(?<!x)@/ cannot run in linear time: a lookbehind (?<!...) is not supported (rules use RE2 syntax)',
    ]);
    const nested = 'transform: \'$map([result.email], function($e) { $replace($e, /(a)\\1/, "") })\'\n';
    expect(await loadErrors({ 'n.yaml': ruleYaml('n', nested) })).toEqual([
      'n.yaml:5 transform: regular expression /(a)\\1/ cannot run in linear time: a backreference (\\1) is not supported (rules use RE2 syntax)',
    ]);
  });

  it('compiles in a kept version, says why, and throws instead of running if evaluated', async () => {
    const matcher = compileMatcher({ on: ['*'], where: { 'result.s': { $regex: '(a)\\1' } }, enabled: true }, 'kept');
    expect(matcher).toMatchObject({ ok: true, unavailable: expect.stringMatching(/^\$regex "\(a\)\\\\1" cannot run in linear time: a backreference/) });
    if (!matcher.ok) return;
    expect(() => matcher.matcher.matches(sInput('aa'))).toThrow(RegexUnavailableError);
    // Patterns no version ever accepted stay errors.
    expect(compileMatcher({ on: ['*'], where: { 'result.s': { $regex: '(' } }, enabled: true }, 'kept').ok).toBe(false);

    const transform = compileTransform('$contains(result.s, /(?=a)/)', 'kept');
    expect(transform).toMatchObject({ ok: true, unavailable: expect.stringMatching(/^regular expression \/\(\?=a\)\/ cannot run in linear time/) });
    expect(compileTransform('$contains(result.s, /(?=a)/)').ok).toBe(false);
    if (!transform.ok) return;
    const failure = await transform.transform.render(sInput('a')).catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(TransformError);
    expect((failure as Error).message).toMatch(/regular expression \/\(\?=a\)\/ cannot run in linear time/);
  });
});
