// npm run bench:store — what the SQLite store's work costs the process per event, without HTTP: a group
// commit (`saveEvent`) with one event per commit (a moderate rate, where each request commits alone) and
// with 32 (full load), and the schema learner working off stored events (reading each back, parsing and
// walking its body). CPU per event. With BENCH_BASE set to another built checkout, both run in alternating
// rounds, each measurement in a fresh process, and the table shows the ratio of the medians.
// BENCH_ROUNDS (default 5), BENCH_EVENTS (default 10,000 per commit case, twice that learned), BENCH_DURABILITY
// (default normal: without the fsync, whose time in the kernel varies more between runs than the whole
// commit costs the process).
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { formatRatio, median, printTable } from './lib/run.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const child = fileURLToPath(new URL('./lib/store-child.mjs', import.meta.url));
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const EVENTS = Number(process.env.BENCH_EVENTS ?? 10_000);
const DURABILITY = process.env.BENCH_DURABILITY ?? 'normal';
const checkouts = [['this checkout', root], ...(process.env.BENCH_BASE ? [['BENCH_BASE', process.env.BENCH_BASE]] : [])];

const cases = [
  ['commit, 1 per commit', ['commit', '1', String(EVENTS), DURABILITY]],
  ['commit, 32 per commit', ['commit', '32', String(EVENTS), DURABILITY]],
  ['schema learning', ['learn', String(2 * EVENTS)]],
];
const measure = (checkout, args) => JSON.parse(execFileSync(process.execPath, [child, checkout, ...args]).toString()).cpuUs;

console.log(`bench:store — ${EVENTS} events per commit case (durability ${DURABILITY}), ${2 * EVENTS} learned, ${ROUNDS} rounds, node ${process.version}\n`);
const rows = [];
for (const [caseName, args] of cases) {
  const cpu = new Map(checkouts.map(([name]) => [name, []]));
  for (let round = 0; round < ROUNDS; round++) {
    // Alternating, and the order swapped every round: neither build always runs first.
    const order = round % 2 === 0 ? checkouts : [...checkouts].reverse();
    for (const [name, dir] of order) cpu.get(name).push(measure(dir, args));
  }
  const base = cpu.get('BENCH_BASE');
  for (const [name] of checkouts) {
    const values = cpu.get(name);
    const compared = base && name !== 'BENCH_BASE';
    rows.push({
      case: `${name}: ${caseName}`,
      cpuUs: median(values).toFixed(1),
      range: `${Math.min(...values).toFixed(1)}–${Math.max(...values).toFixed(1)}`,
      vsBase: compared ? formatRatio(median(values) / median(base)) : '',
      lowerIn: compared ? `${values.filter((v, i) => v < base[i]).length} of ${ROUNDS}` : '',
    });
  }
}
printTable(rows, ['case', 'cpuUs', 'range', 'vsBase', 'lowerIn']);
