// npm run bench:mixed-ab — two delivery settings compared at one fixed ingest rate, in alternating runs.
// bench:mixed sets each run's rates from that run's maximum, so two runs of it compare different loads;
// this holds the load still. Each run: a fresh `hookrelay serve` with BENCH_RULES rules forwarding every
// event to a local sink, 2 s of warm-up at the rate (delivered, then forgotten by the sink), then
// BENCH_DURATION s of open-loop ingest at BENCH_RATE events/s. A and B alternate, and swap order every
// round (the second run of a pair tends to win). Prints each run, then the medians.
// BENCH_A / BENCH_B: YAML lines under `delivery:` for each side, e.g. BENCH_A="  threadNice: 0".
// BENCH_A_CLI / BENCH_B_CLI: another build's dist/cli.js for a side (default this checkout's): two versions.
import { forwardingCase } from './lib/forwarding-case.mjs';
import { median, printTable } from './lib/run.mjs';

const RATE = Number(process.env.BENCH_RATE ?? 3_500);
const SECONDS = Number(process.env.BENCH_DURATION ?? 10);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 6);
const RULES = Number(process.env.BENCH_RULES ?? 1);
const sides = { A: process.env.BENCH_A ?? '', B: process.env.BENCH_B ?? '' };
const clis = { A: process.env.BENCH_A_CLI, B: process.env.BENCH_B_CLI };
if (sides.A === sides.B && clis.A === clis.B) throw new Error('BENCH_A and BENCH_B (YAML lines under delivery:) or BENCH_A_CLI and BENCH_B_CLI must differ');

const describeSide = (side) => `${JSON.stringify(sides[side])}${clis[side] ? ` with ${clis[side]}` : ''}`;
console.log(`bench:mixed-ab — ${RULES} rule(s), ${RATE} events/s for ${SECONDS} s, ${ROUNDS} rounds\n  A: ${describeSide('A')}\n  B: ${describeSide('B')}`);
const results = { A: [], B: [] };
for (let round = 0; round < ROUNDS; round++) {
  for (const side of round % 2 === 0 ? ['A', 'B'] : ['B', 'A']) {
    const result = await forwardingCase({ rules: RULES, rate: RATE, seconds: SECONDS, delivery: `${sides[side]}\n`, ...(clis[side] && { cli: clis[side] }) });
    results[side].push(result);
    console.log(`  round ${round + 1} ${side}: ack p50 ${result.ackP50} p99 ${result.ackP99} ms, delivered p99 ${result.deliveredP99} ms, backlog ${result.backlogS.toFixed(2)} s, ${result.cpuUs} µs CPU per event`);
  }
}
const med = (values) => Math.round(median(values) * 10) / 10;
const rows = Object.entries(results).map(([side, runs]) => ({
  side,
  'ack p50': med(runs.map((r) => r.ackP50)),
  'ack p99': med(runs.map((r) => r.ackP99)),
  'ack p99 range': `${Math.min(...runs.map((r) => r.ackP99))}–${Math.max(...runs.map((r) => r.ackP99))}`,
  'delivered p99': med(runs.map((r) => r.deliveredP99)),
  'backlog s': median(runs.map((r) => r.backlogS)).toFixed(2),
  cpuUs: med(runs.map((r) => r.cpuUs)),
  failed: runs.reduce((sum, r) => sum + r.failed, 0),
}));
console.log('\nmedians over the rounds (ms):');
printTable(rows, Object.keys(rows[0]));
const aWins = results.A.filter((a, i) => a.ackP99 < results.B[i].ackP99).length;
console.log(`A had the lower ack p99 in ${aWins} of ${ROUNDS} rounds`);
