// npm run bench:regex — the rule regex engine (re2js, RE2 semantics, linear time) against JavaScript's
// RegExp on the same patterns and realistic strings: filter tests (`$regex`), a JSONata transform using a
// regex literal, compiling a pattern, and the catastrophic `^(a+)+$`. With BENCH_RE2_DIR set to a directory
// where the native `re2` package is installed (it is not a dependency: it compiles abseil and RE2 from
// source), native RE2 is measured too. `hookrelay $regex` is what a filter runs: re2js, or a string search
// for a plain-text pattern. Each case runs BENCH_MATCHES (10,000) times per round, engines
// alternating, BENCH_ROUNDS (9) rounds after 3 warm-up passes; prints the median time per operation and the ratio to RegExp.
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { formatRatio, median, printTable } from './lib/run.mjs';

const MATCHES = Number(process.env.BENCH_MATCHES ?? 10_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 9);
const root = fileURLToPath(new URL('..', import.meta.url));
const { compileLinearRegex, LinearRegExp } = await import(join(root, 'dist', 'rules', 'regex-engine.js'));
const { RE2JS } = await import('re2js');
const jsonata = (await import('jsonata')).default;
const NativeRE2 = process.env.BENCH_RE2_DIR ? createRequire(join(process.env.BENCH_RE2_DIR, 'noop.js'))('re2') : null;

const emails = Array.from({ length: 100 }, (_, i) => (i % 3 === 0 ? `buyer${i}@example.com` : `Customer.${i}+tag@mail${i % 7}.shop.io`));
const uuids = Array.from({ length: 100 }, (_, i) => `${(0x7f1c9a2e + i).toString(16)}-0c55-4a53-9d6e-3f0d1c2b4a${(i % 100).toString().padStart(2, '0')}`);
const notes = Array.from({ length: 100 }, (_, i) => `Order ${i} of 2 tokens, shipped to warehouse ${i % 9}; reference INV-${100000 + i * 37} paid by card ending ${1000 + i}.`);

/** Filter cases: pattern, flags, the strings it is tested against (cycled). */
const FILTERS = [
  { name: 'plain text: @example\\.com$', pattern: '@example\\.com$', flags: '', texts: emails },
  { name: 'suffix, i: @example\\.com$', pattern: '@example\\.com$', flags: 'i', texts: emails },
  { name: 'alternation: ^BUY_WITH_(CARD|CRYPTO)$', pattern: '^BUY_WITH_(CARD|CRYPTO)$', flags: '', texts: ['BUY_WITH_CARD', 'BUY_WITH_CRYPTO', 'BUY_WITH_BANK'] },
  { name: 'uuid shape', pattern: '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$', flags: '', texts: uuids },
  { name: 'search in ~100 chars: INV-\\d{6}', pattern: 'INV-\\d{6}', flags: '', texts: notes },
];

function time(operations, run) {
  const start = process.hrtime.bigint();
  run();
  return Number(process.hrtime.bigint() - start) / operations; // ns per operation
}

function testLoop(tester, texts) {
  let hits = 0;
  return () => {
    for (let i = 0; i < MATCHES; i++) if (tester(texts[i % texts.length])) hits++;
    return hits;
  };
}

function engines(pattern, flags) {
  const js = new RegExp(pattern, flags);
  const compiled = compileLinearRegex(pattern, flags);
  const list = [
    ['RegExp', (text) => js.test(text)],
    ['re2js', (text) => compiled.regex.test(text)],
    // What `$regex` runs: re2js, or a string search for a plain-text pattern.
    ['hookrelay $regex', compiled.test],
  ];
  if (NativeRE2) {
    const native = new NativeRE2(pattern, flags);
    list.push(['re2 (native)', (text) => native.test(text)]);
  }
  return list;
}

/** Runs each engine's loop once per round, alternating; returns median ns per operation by engine. */
function measure(cases) {
  const samples = new Map(cases.map(([name]) => [name, []]));
  for (let pass = 0; pass < 3; pass++) for (const [, run] of cases) run(); // warm-up: every engine's code optimised
  for (let round = 0; round < ROUNDS; round++) for (const [name, run, ops] of cases) samples.get(name).push(time(ops ?? MATCHES, run));
  return new Map([...samples].map(([name, values]) => [name, median(values)]));
}

const rows = [];
const push = (label, results) => {
  const base = results.get('RegExp');
  for (const [engine, ns] of results) rows.push({ case: label, engine, 'µs/op': (ns / 1000).toFixed(3), 'vs RegExp': formatRatio(ns / base) });
};

for (const filter of FILTERS) push(filter.name, measure(engines(filter.pattern, filter.flags).map(([name, tester]) => [name, testLoop(tester, filter.texts)])));

// A transform with a regex literal, evaluated as a rule's transform is (JSONata's RegexEngine option).
const EXPRESSION = '{ "domain": $replace(result.email, /^[^@]+@/, ""), "vip": $contains(result.email, /^vip|@example\\.com$/i) }';
const plain = jsonata(EXPRESSION);
const linear = jsonata(EXPRESSION, { RegexEngine: LinearRegExp });
const transformLoop = (expression) => async () => {
  for (let i = 0; i < MATCHES; i++) await expression.evaluate({ result: { email: emails[i % emails.length] } });
};
{
  const results = new Map();
  for (let pass = 0; pass < 3; pass++) for (const [, run] of [['RegExp', transformLoop(plain)], ['re2js', transformLoop(linear)]]) await run();
  const samples = { RegExp: [], re2js: [] };
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, run] of [['RegExp', transformLoop(plain)], ['re2js', transformLoop(linear)]]) {
      const start = process.hrtime.bigint();
      await run();
      samples[name].push(Number(process.hrtime.bigint() - start) / MATCHES);
    }
  }
  for (const [name, values] of Object.entries(samples)) results.set(name, median(values));
  push('JSONata transform, $replace + $contains', results);
}

// Compiling: rules are compiled at each load and in each thread (re2js uncached here).
{
  const patterns = FILTERS.map((filter) => [filter.pattern, filter.flags]);
  const compileCases = [
    ['RegExp', () => patterns.forEach(([p, f]) => new RegExp(p, f)), patterns.length],
    ['re2js', () => patterns.forEach(([p, f]) => RE2JS.compile(p, f.includes('i') ? RE2JS.CASE_INSENSITIVE : 0)), patterns.length],
  ];
  if (NativeRE2) compileCases.push(['re2 (native)', () => patterns.forEach(([p, f]) => new NativeRE2(p, f)), patterns.length]);
  const samples = new Map(compileCases.map(([name]) => [name, []]));
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, compile, count] of compileCases) {
      const start = process.hrtime.bigint();
      for (let i = 0; i < 200; i++) compile();
      samples.get(name).push(Number(process.hrtime.bigint() - start) / (200 * count));
    }
  }
  push('compile one pattern', new Map([...samples].map(([name, values]) => [name, median(values)])));
}

// The catastrophic pattern: RegExp's time doubles with each `a`, so it runs on 22 and 24 only, once each,
// after two short runs (V8 interprets a regex's first run and compiles it on the next).
const catastrophic = [];
const backtracking = /^(a+)+$/;
backtracking.test('aaaa!');
backtracking.test('aaaa!');
for (const n of [22, 24]) {
  const text = `${'a'.repeat(n)}!`;
  const start = process.hrtime.bigint();
  backtracking.test(text);
  catastrophic.push(`RegExp ${n} a's: ${(Number(process.hrtime.bigint() - start) / 1e6).toFixed(0)} ms`);
}
const hostile = [`${'a'.repeat(32)}!`, `${'a'.repeat(1000)}!`];
const linearCatastrophic = compileLinearRegex('^(a+)+$').regex;
for (const text of hostile) {
  const ns = time(MATCHES, testLoop((t) => linearCatastrophic.test(t), [text]));
  catastrophic.push(`re2js ${text.length - 1} a's: ${(ns / 1000).toFixed(2)} µs`);
  if (NativeRE2) {
    const native = new NativeRE2('^(a+)+$');
    catastrophic.push(`re2 (native) ${text.length - 1} a's: ${(time(MATCHES, testLoop((t) => native.test(t), [text])) / 1000).toFixed(2)} µs`);
  }
}

printTable(rows, ['case', 'engine', 'µs/op', 'vs RegExp']);
console.log(`^(a+)+$ against a's then "!": ${catastrophic.join('; ')}`);
