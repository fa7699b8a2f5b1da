// npm run bench:commit — what a group commit costs the process, without HTTP: SQLite `saveEvent` through the
// store, one event per commit (a moderate rate, where each request commits alone) and 32 per commit (full
// load), CPU per event. With BENCH_BASE set to another built checkout, both run in alternating rounds, each
// measurement in a fresh process, and the table shows the ratio of the medians.
// BENCH_ROUNDS (default 5), BENCH_EVENTS (default 10,000), BENCH_DURABILITY (default normal: without the
// fsync, whose time in the kernel varies more between runs than the whole commit costs the process).
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { formatRatio, median, printTable } from './lib/run.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const child = fileURLToPath(new URL('./lib/commit-child.mjs', import.meta.url));
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const EVENTS = Number(process.env.BENCH_EVENTS ?? 10_000);
const DURABILITY = process.env.BENCH_DURABILITY ?? 'normal';
const checkouts = [['this checkout', root], ...(process.env.BENCH_BASE ? [['BENCH_BASE', process.env.BENCH_BASE]] : [])];

const measure = (checkout, perCommit) => JSON.parse(execFileSync(process.execPath, [child, checkout, String(perCommit), String(EVENTS), DURABILITY]).toString());

console.log(`bench:commit — ${EVENTS} events per measurement, durability ${DURABILITY}, ${ROUNDS} rounds, node ${process.version}\n`);
const rows = [];
for (const perCommit of [1, 32]) {
  const cpu = new Map(checkouts.map(([name]) => [name, []]));
  for (let round = 0; round < ROUNDS; round++) {
    // Alternating, and the order swapped every round: neither build always runs first.
    const order = round % 2 === 0 ? checkouts : [...checkouts].reverse();
    for (const [name, dir] of order) cpu.get(name).push(measure(dir, perCommit).cpuUs);
  }
  const base = cpu.get('BENCH_BASE');
  for (const [name] of checkouts) {
    const values = cpu.get(name);
    rows.push({
      case: `${name}, ${perCommit} per commit`,
      cpuUs: median(values).toFixed(1),
      range: `${Math.min(...values).toFixed(1)}–${Math.max(...values).toFixed(1)}`,
      vsBase: base && name !== 'BENCH_BASE' ? formatRatio(median(values) / median(base)) : '',
      lowerIn: base && name !== 'BENCH_BASE' ? `${values.filter((v, i) => v < base[i]).length} of ${ROUNDS}` : '',
    });
  }
}
printTable(rows, ['case', 'cpuUs', 'range', 'vsBase', 'lowerIn']);
