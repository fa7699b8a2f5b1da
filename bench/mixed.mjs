// npm run bench:mixed — ingest while forwarding: what users run, both at once.
// 1) The maximum rate of `hookrelay serve` with no rules, measured by the open-loop client itself
//    (lib/fixed-rate.mjs, asked for far more than the server can take: the rate it answers at).
// 2) Open-loop ingest at 25 % and 50 % of that rate with 0, 1 and 10 rules forwarding every event to a
//    local sink (delay-sink.mjs, answers at once), the cases alternating within each round: ack p50/p99,
//    ingest→delivered p50/p99 (due time of the ingest request to the arrival of its last delivery), the
//    backlog when the load's schedule ends (in seconds of traffic: due deliveries not arrived by then, so an
//    ingest that fell behind counts), CPU per event (the server process, from the first
//    request until every delivery arrived), peak RSS. Medians over the rounds; ratios to no rules.
//    The forwarding side's baseline: a plain undici sender (lib/undici-rate.mjs, its own process) posting
//    bodies of the same size to the same sink at each case's rate; `delivery vs undici` is what forwarding
//    adds per event (1 rule minus no rules, CPU per event) over what that sender spends per POST.
//    A fourth case per rate, no rules with that sender running beside the server at the delivery thread's
//    priority (nice 10) and posting as many bodies to the sink: what sending alone, without any store work,
//    costs the ack tail on the same cores; its `ack p99 vs 0 rules` is the machine's share of the 1-rule case's.
// 3) The highest rate (1 rule, BENCH_MIXED_SEARCH_SECONDS runs) whose backlog at the end stays under one
//    second of traffic, by bisection between 25 % and 100 % of the maximum.
// Each case (lib/forwarding-case.mjs) starts with a warm-up at its own rate, delivered and then forgotten by the sink:
// the figures are the steady state, not the first seconds of a cold process (compiling, the limit adapting).
// BENCH_QUICK=1 shortens everything (a smoke run, about 2 minutes). BENCH_MIXED_DELIVERY: more YAML lines
// under `delivery:` of every case (e.g. "  thread: false"), to compare settings in alternating runs.
import { fixedRateLoad } from './lib/fixed-rate.mjs';
import { plainSenderArgs, rawRequests, startDelaySink, startForwarding } from './lib/fixed-rate-delivery.mjs';
import { CONNECTIONS, forwardingCase, WARM_UP_FIRST_INDEX } from './lib/forwarding-case.mjs';
import { formatRatio, median, printTable, startServer, stopServer, whenExited } from './lib/run.mjs';
import { rmSync } from 'node:fs';

const QUICK = process.env.BENCH_QUICK === '1';
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const SECONDS = Number(process.env.BENCH_DURATION ?? (QUICK ? 5 : 20));
const SEARCH_SECONDS = Number(process.env.BENCH_MIXED_SEARCH_SECONDS ?? (QUICK ? 10 : 30));
const SEARCH_STEPS = QUICK ? 1 : 3;
const RULE_COUNTS = [0, 1, 10];
const SHARES = [0.25, 0.5];
const DELIVERY = process.env.BENCH_MIXED_DELIVERY ? `${process.env.BENCH_MIXED_DELIVERY}\n` : '';

/** The rate the server answers at when asked for far more than it can take (no rules), after a warm-up. */
async function maxRate() {
  const sink = await startDelaySink(0);
  const { server, dataDir } = await startForwarding({ rules: 0, sinkPort: sink.port, delivery: DELIVERY });
  try {
    const ask = 30_000;
    const seconds = QUICK ? 2 : 4;
    await fixedRateLoad({ port: server.port, rate: 2000, seconds: 1, connections: CONNECTIONS, requests: rawRequests(2000, WARM_UP_FIRST_INDEX) });
    const run = await fixedRateLoad({ port: server.port, rate: ask, seconds, connections: CONNECTIONS, requests: rawRequests(ask * seconds) });
    return Math.round(run.ok / run.seconds);
  } finally {
    await stopServer(server.child);
    await stopServer(sink.child);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** CPU per POST of a plain undici sender at `rate` for `seconds`, to a fresh delay sink. */
async function undiciSender(rate, seconds) {
  const sink = await startDelaySink(0);
  try {
    const child = await startServer(process.execPath, plainSenderArgs(`http://127.0.0.1:${sink.port}/undici`, rate, seconds), {
      readPort: (line) => line.startsWith('{') && JSON.parse(line),
    });
    await whenExited(child.child);
    return child.port.cpuUsPerPost; // readPort returned the sender's report
  } finally {
    await stopServer(sink.child);
  }
}

const max = await maxRate();
console.log(`maximum rate with no rules (open-loop client, ${CONNECTIONS} connections): ${max} events/s\n`);

// Every case once per round, alternating, so that a neighbour's burst falls on all of them alike.
// Beside them, no rules with a plain sender posting as many bodies to the sink: what sending costs the ack tail here.
const cases = SHARES.flatMap((share) => [
  ...RULE_COUNTS.map((rules) => ({ share, rules, sender: false, rate: Math.round(max * share) })),
  { share, rules: 0, sender: true, rate: Math.round(max * share) },
]);
const results = cases.map(() => []);
const senders = new Map(SHARES.map((share) => [share, []]));
for (let round = 0; round < ROUNDS; round++) {
  for (const [i, c] of cases.entries()) results[i].push(await forwardingCase({ rules: c.rules, rate: c.rate, seconds: SECONDS, delivery: DELIVERY, sender: c.sender }));
  for (const share of SHARES) senders.get(share).push(await undiciSender(Math.round(max * share), SECONDS));
}

const med = (rounds, key) => (rounds[0][key] === null ? '–' : Math.round(median(rounds.map((r) => r[key])) * 10) / 10);
const rows = cases.map((c, i) => {
  const rounds = results[i];
  const base = results[cases.findIndex((b) => b.share === c.share && b.rules === 0 && !b.sender)];
  // Ratios within each round (the cases of one round ran back to back), then their median.
  const ackRatio = median(rounds.map((r, k) => r.ackP99 / base[k].ackP99));
  const cpuRatio = median(rounds.map((r, k) => r.cpuUs / base[k].cpuUs));
  return {
    case: `${Math.round(c.share * 100)} % (${c.rate}/s), ${c.sender ? '0 rules + plain sender' : `${c.rules} rules`}`,
    'ack p50': med(rounds, 'ackP50'),
    'ack p99': med(rounds, 'ackP99'),
    'ack p99 range': `${Math.min(...rounds.map((r) => r.ackP99))}–${Math.max(...rounds.map((r) => r.ackP99))}`,
    'ack p99 vs 0 rules': formatRatio(ackRatio),
    'delivered p50': med(rounds, 'deliveredP50'),
    'delivered p99': med(rounds, 'deliveredP99'),
    'backlog s': med(rounds, 'backlogS'),
    cpuUs: med(rounds, 'cpuUs'),
    'cpu vs 0 rules': formatRatio(cpuRatio),
    rssMb: Math.max(...rounds.map((r) => r.rssMb)),
    failed: rounds.reduce((sum, r) => sum + r.failed, 0),
  };
});
console.log(`ingest while forwarding, ${SECONDS} s per case, median of ${ROUNDS} alternating rounds (latencies in ms):`);
printTable(rows, Object.keys(rows[0]));

// What forwarding adds per event against what sending alone costs at that rate, within each round.
const senderRows = SHARES.map((share) => {
  const at = (rules) => results[cases.findIndex((c) => c.share === share && c.rules === rules && !c.sender)];
  const [none, one] = [at(0), at(1)];
  const added = one.map((r, k) => r.cpuUs - none[k].cpuUs);
  const sender = senders.get(share);
  return {
    rate: `${Math.round(share * 100)} % (${Math.round(max * share)}/s)`,
    'forwarding adds µs/event': Math.round(median(added)),
    'undici sender µs/POST': Math.round(median(sender)),
    'delivery vs undici': formatRatio(median(added.map((a, k) => a / sender[k]))),
  };
});
console.log('\nforwarding (1 rule minus no rules, CPU per event) against a plain undici sender at the same rate:');
printTable(senderRows, Object.keys(senderRows[0]));

// The highest rate whose backlog at the end of a run stays under one second of traffic (1 rule).
let low = 0;
let high = max;
let rate = Math.round(max * 0.25);
const tried = [];
for (let step = 0; step < SEARCH_STEPS; step++) {
  const result = await forwardingCase({ rules: 1, rate, seconds: SEARCH_SECONDS, delivery: DELIVERY });
  const keeps = result.backlogS < 1;
  tried.push({ rate, 'backlog s': Math.round(result.backlogS * 100) / 100, 'ack p99': result.ackP99, 'delivered p99': result.deliveredP99, keeps: keeps ? 'yes' : 'no' });
  if (keeps) low = rate;
  else high = rate;
  rate = Math.round((low + high) / 2);
}
console.log(`\nbacklog at the end of ${SEARCH_SECONDS} s runs with 1 rule (keeps up: under one second of traffic):`);
printTable(tried, Object.keys(tried[0]));
console.log(low > 0 ? `highest rate that kept up: ${low}/s (${Math.round((low / max) * 100)} % of the maximum)` : 'no rate tried kept up');
