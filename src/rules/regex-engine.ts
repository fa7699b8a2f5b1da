import { createRequire } from 'node:module';
import type { RE2JS } from 're2js';

/**
 * The one regular-expression engine of rules (`$regex` in `where`, regex literals in transforms): RE2
 * semantics through re2js, which matches in time linear in the text, so no pattern a rule author writes
 * can hold the event loop that acknowledges webhooks. Patterns that need backtracking (backreferences,
 * lookarounds) have no linear-time algorithm and are refused.
 */

/**
 * How a refused pattern is treated: a rule file loaded now (`new`) reports it as a load error; a rule
 * version kept by hash (`kept`), written when JavaScript regexes were accepted, still compiles so its
 * pending deliveries are sent, but that regex is never run: evaluating it throws `RegexUnavailableError`.
 */
export type RegexMode = 'new' | 'kept';

export type RegexCompilation =
  | { ok: true; regex: RE2JS; /** Whether the pattern occurs in `text` (what `$regex` asks). */ test: (text: string) => boolean }
  | { ok: false; message: string };

/** Flags a rule may give and the engine flag each maps to; `u` changes nothing: RE2 always matches whole code points. */
const ENGINE_FLAGS = {
  i: 'CASE_INSENSITIVE',
  m: 'MULTILINE',
  s: 'DOTALL',
  u: null,
} as const satisfies Record<string, keyof typeof RE2JS | null>;
type Flag = keyof typeof ENGINE_FLAGS;

const require = createRequire(import.meta.url);
let loaded: typeof RE2JS | undefined;

/** The engine is loaded with the first pattern: a process whose rules have none does not pay its 6 MB. */
function engine(): typeof RE2JS {
  loaded ??= (require('re2js') as typeof import('re2js')).RE2JS;
  return loaded;
}

export const REGEX_FLAGS = Object.keys(ENGINE_FLAGS);

/** Raised when a kept rule version's regex, which the engine cannot run, is evaluated. */
export class RegexUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RegexUnavailableError';
  }
}

/** Compiled patterns by flags and source: rules are compiled again on each reload and in each thread. */
const compiled = new Map<string, RegexCompilation>();
const MAX_CACHED = 1_000;

/** Compiles `pattern` for the engine, or says in one sentence why it cannot run there. */
export function compileLinearRegex(pattern: string, flags = ''): RegexCompilation {
  const key = `${flags}/${pattern}`;
  const cached = compiled.get(key);
  if (cached) return cached;
  const result = compileUncached(pattern, flags);
  if (compiled.size >= MAX_CACHED) compiled.delete(compiled.keys().next().value!);
  compiled.set(key, result);
  return result;
}

function compileUncached(pattern: string, flags: string): RegexCompilation {
  let engineFlags = 0;
  for (const flag of flags) {
    if (!Object.hasOwn(ENGINE_FLAGS, flag)) return { ok: false, message: `flag "${flag}" is not supported (flags: ${REGEX_FLAGS.join(', ')})` };
    const name = ENGINE_FLAGS[flag as Flag];
    if (name !== null) engineFlags |= engine()[name];
  }
  const construct = backtrackingConstruct(pattern);
  if (construct !== undefined) {
    return { ok: false, message: `cannot run in linear time: ${construct} is not supported (rules use RE2 syntax)` };
  }
  try {
    const regex = engine().compile(pattern, engineFlags);
    const byEngine = (text: string) => regex.test(text);
    return { ok: true, regex, test: literalTest(pattern, flags, byEngine) ?? byEngine };
  } catch (err) {
    const reason = (err as Error).message.replace(/^error parsing regexp: /, '');
    return { ok: false, message: `is not a valid RE2 regular expression: ${reason}` };
  }
}

const METACHARACTERS = new Set('\\^$.|?*+()[]{}');

const NON_ASCII = /[^\x00-\x7f]/;

/**
 * A test by string search for a pattern that is plain text (escaped punctuation allowed), optionally
 * anchored, without `m`: `@example\.com$` is `endsWith`. The same answers as the engine at the cost of a
 * string search (re2js takes 10 to 50 times longer per test on short strings); undefined for any other
 * pattern. With `i`, ASCII text is compared lower-cased, which is exactly RE2's case folding there; text
 * with other characters (`K` also matches the Kelvin sign) goes to the engine, `byEngine`.
 */
function literalTest(pattern: string, flags: string, byEngine: (text: string) => boolean): ((text: string) => boolean) | undefined {
  if (flags.includes('m')) return undefined;
  const start = pattern.startsWith('^');
  let literal = '';
  let end = false;
  for (let i = start ? 1 : 0; i < pattern.length; i++) {
    const char = pattern[i]!;
    if (end || char < ' ' || char > '~') return undefined; // printable ASCII only, nothing after `$`
    if (char === '$') end = true;
    else if (char === '\\') {
      const next = pattern[++i];
      if (next === undefined || !/[!-/:-@[-`{-~]/.test(next)) return undefined; // `\d`, `\b`, `\1`...: not plain text
      literal += next;
    } else if (METACHARACTERS.has(char)) return undefined;
    else literal += char;
  }
  if (!flags.includes('i')) return stringSearch(literal, start, end);
  const lower = literal.toLowerCase();
  const at = (text: string, offset: number) => offset >= 0 && (caseInsensitiveAt(text, offset, lower) ?? byEngine(text));
  if (start && end) return (text) => text.length === lower.length && at(text, 0);
  if (start) return (text) => at(text, 0);
  if (end) return (text) => at(text, text.length - lower.length);
  const search = stringSearch(lower, false, false);
  return (text) => (NON_ASCII.test(text) ? byEngine(text) : search(text.toLowerCase()));
}

/** Characters RE2's case folding maps to ASCII letters: the Kelvin sign (k) and the long s (s). */
const FOLDS_TO_ASCII = new Set([0x212a, 0x17f]);

/** Whether `lower` (lower-case ASCII) is at `offset` of `text` ignoring ASCII case; undefined: only the engine can tell. */
function caseInsensitiveAt(text: string, offset: number, lower: string): boolean | undefined {
  if (offset + lower.length > text.length) return false;
  for (let i = 0; i < lower.length; i++) {
    let code = text.charCodeAt(offset + i);
    if (code >= 65 && code <= 90) code += 32;
    if (code === lower.charCodeAt(i)) continue;
    return FOLDS_TO_ASCII.has(code) ? undefined : false;
  }
  return true;
}

function stringSearch(literal: string, start: boolean, end: boolean): (text: string) => boolean {
  if (start && end) return (text) => text === literal;
  if (start) return (text) => text.startsWith(literal);
  if (end) return (text) => text.endsWith(literal);
  return (text) => text.includes(literal);
}

/** Names the first construct of `pattern` that only a backtracking engine runs, to say why it is refused. */
export function backtrackingConstruct(pattern: string): string | undefined {
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const char = pattern[i];
    if (char === '\\') {
      const next = pattern[i + 1] ?? '';
      if (!inClass && /[1-9]/.test(next)) return `a backreference (\\${next})`;
      if (!inClass && next === 'k' && pattern[i + 2] === '<') return 'a named backreference (\\k<...>)';
      i++;
    } else if (inClass) {
      if (char === ']') inClass = false;
    } else if (char === '[') {
      inClass = true;
    } else if (char === '(' && pattern[i + 1] === '?') {
      const kind = pattern.slice(i + 2, i + 4);
      if (kind[0] === '=' || kind[0] === '!') return `a lookahead (?${kind[0]}...)`;
      if (kind === '<=' || kind === '<!') return `a lookbehind (?${kind}...)`;
    }
  }
  return undefined;
}

/**
 * JSONata builds a `RegexEngine` from the same literal (a RegExp in its parsed expression) on each
 * evaluation: its compilation lives as long as the expression, whatever the size of the shared cache.
 */
const literals = new WeakMap<RegExp, RegexCompilation>();

function compiledLiteral(literal: RegExp): RegexCompilation {
  let result = literals.get(literal);
  if (result === undefined) {
    result = compileLinearRegex(literal.source, literal.flags.replace('g', ''));
    literals.set(literal, result);
  }
  return result;
}

/**
 * A stand-in for `RegExp` that JSONata builds its regex literals with (its `RegexEngine` option): JSONata
 * sets `lastIndex`, calls `exec` and reads the match, its groups and `index`. Indices count UTF-16 code
 * units, as `RegExp` does. A pattern the engine cannot run throws when it is built, that is when a kept
 * rule version's transform evaluates it (a rule loaded now never has one: it is refused at load).
 */
export class LinearRegExp {
  lastIndex = 0;
  readonly source: string;
  readonly flags: string;
  private readonly regex: RE2JS;
  private readonly global: boolean;

  constructor(pattern: RegExp | string, flags?: string) {
    this.source = typeof pattern === 'string' ? pattern : pattern.source;
    this.flags = flags ?? (typeof pattern === 'string' ? '' : pattern.flags);
    this.global = this.flags.includes('g');
    const result = typeof pattern !== 'string' && flags === undefined ? compiledLiteral(pattern) : compileLinearRegex(this.source, this.flags.replace('g', ''));
    if (!result.ok) throw new RegexUnavailableError(`regular expression /${this.source}/ ${result.message}`);
    this.regex = result.regex;
  }

  exec(text: string): RegExpExecArray | null {
    const from = this.global ? this.lastIndex : 0;
    const matcher = this.regex.matcher(text);
    if (from > text.length || !matcher.find(from)) {
      this.lastIndex = 0;
      return null;
    }
    const groups: Array<string | undefined> = [];
    for (let group = 0; group <= matcher.groupCount(); group++) groups.push(matcher.group(group) ?? undefined);
    const match = Object.assign(groups, { index: matcher.start(), input: text, groups: undefined }) as unknown as RegExpExecArray;
    if (this.global) this.lastIndex = matcher.end();
    return match;
  }

  test(text: string): boolean {
    return this.exec(text) !== null;
  }
}
