// The fixed-rate delivery case of bench:delivery: `hookrelay serve` ingesting signed events at a fixed rate
// (open loop, lib/fixed-rate.mjs) with one rule forwarding each to a local sink that answers after a set
// delay. Reports ingest→arrival-at-sink p50/p99 (from when each ingest request was due to when its
// delivery reached the sink) and the backlog (ingested, not yet arrived) when the load ends.
import { createHmac } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { readServePort } from './drain.mjs';
import { fixedRateLoad, rawPost } from './fixed-rate.mjs';
import { BENCH_ADMIN_TOKEN, serveCommand, startServer, stopServer } from './run.mjs';

const root = fileURLToPath(new URL('../..', import.meta.url));
const dist = (p) => join(root, 'dist', p);
const { sampleTransferSucceeded } = await import(dist('samples/transfer-succeeded.js'));
const SECRET = 'bench-secret';
const CONNECTIONS = 50;
const DRAIN_TIMEOUT_MS = 120_000;

const getJson = async (url, headers = {}) => (await request(url, { headers })).body.json();

/** Samples the sink's concurrency limit every 250 ms until stopped: the lowest and highest seen. */
function watchLimit(port) {
  const seen = [];
  const timer = setInterval(async () => {
    const view = await getJson(`http://127.0.0.1:${port}/admin/api/destinations`, { authorization: `Bearer ${BENCH_ADMIN_TOKEN}` }).catch(() => null);
    const limit = view?.destinations?.[0]?.limit;
    if (limit !== undefined) seen.push(limit);
  }, 250);
  return () => {
    clearInterval(timer);
    return seen.length === 0 ? '–' : `${Math.min(...seen)}–${Math.max(...seen)}`;
  };
}

/** A transfer id (a UUID) that carries the event's index, for the sink to report; see delay-sink.mjs. */
export const indexedId = (i) => `fa57fa57-0000-4000-8000-${i.toString(16).padStart(12, '0')}`;

/** Signed keep-alive POSTs whose transfer ids carry their index (from `firstIndex`), built before the clock starts. */
export function rawRequests(count, firstIndex = 0) {
  const template = JSON.stringify(sampleTransferSucceeded());
  const id = JSON.parse(template).result.id;
  return Array.from({ length: count }, (_, i) => {
    const body = template.replace(id, indexedId(firstIndex + i));
    const signature = createHmac('sha256', SECRET).update(body).digest('hex');
    return rawPost('/webhooks/checkout', { 'content-type': 'application/json', 'x-service-signature': signature }, body);
  });
}

/**
 * Arguments of lib/undici-rate.mjs: a plain undici sender posting `rate` bodies of an event's size a second to
 * `url` for `seconds` (an indexed transfer id is as long as the sample's), then printing its CPU per POST.
 */
export const plainSenderArgs = (url, rate, seconds) => [
  join(root, 'bench/lib/undici-rate.mjs'), url, String(rate), String(seconds), String(Buffer.byteLength(JSON.stringify(sampleTransferSucceeded()))),
];

export const percentile = (sorted, q) => Math.round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] * 10) / 10;

/** How many deliveries the delay sink on `port` has received. */
export const sinkCount = async (port) => (await getJson(`http://127.0.0.1:${port}/count`)).count;

/** Polls the delay sink every `pollMs` until it has received `expected` deliveries or `timeoutMs` passed. */
export async function awaitSinkCount(port, expected, { timeoutMs, pollMs }) {
  const start = Date.now();
  while ((await sinkCount(port)) < expected && Date.now() - start < timeoutMs) await new Promise((resolve) => setTimeout(resolve, pollMs));
}

/** The delay sink (delay-sink.mjs) as a child process. */
export const startDelaySink = (delayMs) => startServer(process.execPath, [join(root, 'bench/lib/delay-sink.mjs'), String(delayMs)], { readPort: (l) => l.startsWith('{') && JSON.parse(l).port });

/**
 * `hookrelay serve` (the `cli` given, this checkout's by default) with a fresh data dir and `rules` rules
 * (0 or more) forwarding every event to the sink, each to a path of its own; `delivery`: more YAML lines
 * under `delivery:`. Returns the server and its data dir (the caller removes it).
 */
export async function startForwarding({ rules, sinkPort, delivery = '', cli = dist('cli.js') }) {
  const dataDir = mkdtempSync(join(tmpdir(), 'hookrelay-bench-'));
  const rulesDir = join(dataDir, 'rules');
  mkdirSync(rulesDir);
  for (let i = 0; i < rules; i++) {
    const id = rules === 1 ? 'forward' : `forward-${i}`;
    writeFileSync(join(rulesDir, `${id}.yaml`), `id: ${id}\non: [transfer:succeeded]\nto:\n  url: http://127.0.0.1:${sinkPort}/in${i}\n`);
  }
  const config = join(dataDir, 'hookrelay.yaml');
  writeFileSync(config, `delivery:\n  allowNetworks: ["127.0.0.1/32"]\n${delivery}`);
  const server = await startServer(process.execPath, serveCommand(cli), {
    env: { HOOKRELAY_PORT: '0', HOOKRELAY_HOST: '127.0.0.1', HOOKRELAY_DATA_DIR: dataDir, HOOKRELAY_RULES_DIR: rulesDir, HOOKRELAY_SECRET: SECRET, HOOKRELAY_CONFIG: config },
    readPort: readServePort,
  });
  return { server, dataDir };
}

/**
 * One case. `pinnedConcurrency`: the old fixed limit (`delivery.adaptive: false` with that ceiling);
 * undefined runs the default configuration, with only the loopback sink allowed through the network guard.
 */
export async function fixedRateDelivery({ rate, seconds, sinkDelayMs, pinnedConcurrency }) {
  const sink = await startDelaySink(sinkDelayMs);
  const pinned = pinnedConcurrency === undefined ? '' : `  adaptive: false\n  concurrency: ${pinnedConcurrency}\n`;
  const { server, dataDir } = await startForwarding({ rules: 1, sinkPort: sink.port, delivery: pinned });
  const total = Math.round(rate * seconds);
  try {
    const stopWatching = watchLimit(server.port);
    const load = await fixedRateLoad({ port: server.port, rate, seconds, connections: CONNECTIONS, requests: rawRequests(total) });
    const backlog = load.ok - (await sinkCount(sink.port));
    await awaitSinkCount(sink.port, load.ok, { timeoutMs: DRAIN_TIMEOUT_MS, pollMs: 100 });
    const limitRange = stopWatching();
    const arrivals = await getJson(`http://127.0.0.1:${sink.port}/arrivals`);
    const firstArrival = new Map();
    for (const [index, at] of arrivals) if (!firstArrival.has(index)) firstArrival.set(index, at);
    const latencies = [...firstArrival].map(([index, at]) => at - (load.startedAt + (index * 1000) / rate)).sort((a, b) => a - b);
    const limit = pinnedConcurrency === undefined ? 'adaptive (default)' : `fixed ${pinnedConcurrency}`;
    return {
      name: `${rate}/s, sink ${sinkDelayMs} ms, ${limit}`,
      ingested: load.ok,
      arrived: firstArrival.size,
      p50: percentile(latencies, 0.5),
      p99: percentile(latencies, 0.99),
      max: percentile(latencies, 1),
      backlogAtEnd: backlog,
      limitRange,
      ingestP99: load.p99,
    };
  } finally {
    await stopServer(server.child);
    await stopServer(sink.child);
    rmSync(dataDir, { recursive: true, force: true });
  }
}
