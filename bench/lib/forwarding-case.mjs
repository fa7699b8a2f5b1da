// One ingest-while-forwarding case (bench:mixed, bench:mixed-ab): a fresh `hookrelay serve` with `rules` rules
// forwarding every event to a fresh local sink, a warm-up at the case's own rate (delivered, then forgotten by
// the sink: the figures are the steady state, not a cold process's first seconds), then open-loop ingest.
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { request } from 'undici';
import { fixedRateLoad } from './fixed-rate.mjs';
import { awaitSinkCount, percentile, plainSenderArgs, rawRequests, startDelaySink, startForwarding } from './fixed-rate-delivery.mjs';
import { cpuMs, cpuUsPer, peakRssMb, stopServer } from './run.mjs';

export const CONNECTIONS = 50;
const DRAIN_TIMEOUT_MS = 60_000;
const WARM_UP_SECONDS = 2;
/** The delivery thread's default priority (`delivery.threadNice`): the plain sender runs at the same. */
const SENDER_NICE = 10;
/** Warm-up events carry indices from here on, apart from the measured ones. */
export const WARM_UP_FIRST_INDEX = 2 ** 32;

/**
 * Ack p50/p99, ingest→delivered p50/p99 (due time of the request to the arrival of the event's last delivery),
 * the backlog when the load's schedule ends (seconds of traffic: deliveries due by then that had not arrived;
 * an ingest that fell behind the schedule counts, however late its requests were answered), CPU per event (the server, from the first request until
 * every delivery arrived) and peak RSS. `delivery`: YAML lines under `delivery:`; `cli`: another build's dist/cli.js.
 * `sender` (with no rules): a plain undici sender, its own process at the delivery thread's priority, posts as many
 * bodies a second to the sink during the load: what sending alone, without any store work, does to the ack tail.
 */
export async function forwardingCase({ rules, rate, seconds, delivery = '', cli, sender = false }) {
  const sink = await startDelaySink(0);
  const { server, dataDir } = await startForwarding({ rules, sinkPort: sink.port, delivery, ...(cli && { cli }) });
  const pid = server.child.pid;
  try {
    const warmUp = await fixedRateLoad({ port: server.port, rate, seconds: WARM_UP_SECONDS, connections: CONNECTIONS, requests: rawRequests(Math.round(rate * WARM_UP_SECONDS), WARM_UP_FIRST_INDEX) });
    await awaitSinkCount(sink.port, warmUp.ok * rules, { timeoutMs: DRAIN_TIMEOUT_MS, pollMs: 50 });
    await request(`http://127.0.0.1:${sink.port}/arrivals`, { method: 'DELETE' });
    const sending = sender ? plainSender(sink.port, rate, seconds) : null;
    const cpuBefore = cpuMs(pid);
    const load = await fixedRateLoad({ port: server.port, rate, seconds, connections: CONNECTIONS, requests: rawRequests(Math.round(rate * seconds)) });
    const expected = load.ok * rules;
    if (rules > 0) await awaitSinkCount(sink.port, expected, { timeoutMs: DRAIN_TIMEOUT_MS, pollMs: 50 });
    const cpuUs = cpuUsPer(pid, cpuBefore, load.ok);
    await sending;
    const rssMb = peakRssMb(pid);
    let deliveredP50 = null;
    let deliveredP99 = null;
    let backlog = 0;
    if (rules > 0) {
      // An event is delivered when the last of its rules' deliveries arrived.
      const lastArrival = new Map();
      const scheduleEnd = load.startedAt + seconds * 1000;
      let arrivedByEnd = 0;
      for (const [index, at] of await (await request(`http://127.0.0.1:${sink.port}/arrivals`)).body.json()) {
        lastArrival.set(index, Math.max(lastArrival.get(index) ?? 0, at));
        if (at <= scheduleEnd) arrivedByEnd += 1;
      }
      backlog = expected - arrivedByEnd;
      const latencies = [...lastArrival].map(([index, at]) => at - (load.startedAt + (index * 1000) / rate)).sort((a, b) => a - b);
      deliveredP50 = percentile(latencies, 0.5);
      deliveredP99 = percentile(latencies, 0.99);
    }
    return { ackP50: load.p50, ackP99: load.p99, deliveredP50, deliveredP99, backlogS: rules > 0 ? backlog / rules / rate : 0, cpuUs, rssMb, failed: load.failed };
  } finally {
    await stopServer(server.child);
    await stopServer(sink.child);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** The plain sender posting to the sink for `seconds` at nice SENDER_NICE; resolves when it exits. */
function plainSender(sinkPort, rate, seconds) {
  const child = spawn('nice', ['-n', String(SENDER_NICE), process.execPath, ...plainSenderArgs(`http://127.0.0.1:${sinkPort}/sender`, rate, seconds)], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += chunk));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => (code === 0 ? resolve() : reject(new Error(`the plain sender exited with ${code}: ${stderr.trim()}`))));
  });
}
