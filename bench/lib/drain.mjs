// The delivery loop draining a pre-filled outbox into a counting sink: shared by bench:delivery and
// bench:admin (replay is compared with it).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { cpuMs, cpuUsPer, gcByIsolate, serveCommand, startServer, stopServer, whenExited } from './run.mjs';

const root = fileURLToPath(new URL('../..', import.meta.url));
const dist = (p) => join(root, 'dist', p);
const { SqliteStore } = await import(dist('store/sqlite/sqlite-store.js'));
const { loadRuleSet } = await import(dist('rules/loader.js'));
const { planDeliveries } = await import(dist('rules/plan.js'));
const { sampleTransferSucceeded } = await import(dist('samples/transfer-succeeded.js'));
const cli = dist('cli.js');
const SECRET = 'bench-secret';
export const readServePort = (line) => line.includes('"hookrelay listening"') && Number(new URL(JSON.parse(line).url).port);

/**
 * Fills `dataDir`'s outbox with `total` deliveries of the rules in `rulesDir`, exactly as ingest would (same
 * planning, same transaction shape), without HTTP; `bodyFor(i)` makes each event. Returns the rows made.
 */
export async function fillOutbox(dataDir, rulesDir, total, bodyFor = () => sampleTransferSucceeded()) {
  const loaded = await loadRuleSet(rulesDir, {});
  if (!loaded.ok) throw new Error(JSON.stringify(loaded.errors));
  const store = new SqliteStore({ dataDir, durability: 'normal' });
  let rows = 0;
  while (rows < total) {
    const batch = [];
    for (let i = 0; i < 200 && rows < total; i++) {
      const body = bodyFor(i);
      const raw = Buffer.from(JSON.stringify(body));
      const deliveries = (await planDeliveries(loaded.ruleSet, { source: 'checkout', event: body.event, body, raw })).slice(0, total - rows);
      rows += deliveries.length;
      batch.push(store.saveEvent({ source: 'checkout', event: body.event, transferId: body.result.id, checkoutId: null, email: null, walletAddress: null, validation: 'valid', receivedAt: Date.now(), headers: {}, body: raw, deliveries }));
    }
    await Promise.all(batch);
  }
  await store.close();
  return rows;
}

/** Ten rules on one sink: filters of several kinds (some match everything, some half, some nothing), one transform. */
function deliveryRules(sinkUrl, concurrency) {
  const rules = [];
  for (let i = 0; i < 10; i++) {
    const where = [
      '',
      'where:\n  result.paymentMethod: BUY_WITH_CARD\n',
      'where:\n  result.quantity: { $gte: 1 }\n',
      'where:\n  result.email: { $regex: "@example\\\\.com$" }\n',
      'where:\n  result.totalPriceUsd: { $gte: 0 }\n',
    ][i % 5];
    const transform = i === 0 ? 'transform: |\n  { "email": result.email, "tokens": result.claimedTokens.tokenIds, "total": result.totalPriceUsd }\n' : '';
    rules.push(`id: rule-${i}\non: [transfer:succeeded]\n${where}${transform}to:\n  url: ${sinkUrl}/r${i}\nconcurrency: ${concurrency}\nretry: { schedule: [0s, 1s, 5s] }\n`);
  }
  return rules;
}

export async function sinkCount(port) {
  const res = await request(`http://127.0.0.1:${port}/count`);
  return res.body.json();
}

export async function resetSink(port) {
  await (await request(`http://127.0.0.1:${port}/reset`)).body.dump();
}

/** The baseline: a plain undici loop posting `total` bodies with `concurrency` in flight, in its own process. */
export async function baselineLoop(sinkPort, total, bodyBytes, CONCURRENCY) {
  const child = await startServer(process.execPath, [join(root, 'bench/lib/undici-loop.mjs'), `http://127.0.0.1:${sinkPort}/baseline`, String(total), String(CONCURRENCY), String(bodyBytes)], {
    readPort: (line) => line.startsWith('{') && JSON.parse(line),
  });
  const { ms, cpuMs: loopCpuMs } = child.port; // readPort returned the loop's report
  await whenExited(child.child);
  return { name: `undici loop, ${total} POSTs, ${CONCURRENCY} in flight`, deliveriesPerSec: Math.round(total / (ms / 1000)), seconds: (ms / 1000).toFixed(1), cpuUs: Math.round((loopCpuMs * 1000) / total) };
}

/** Fills an outbox with `rows` deliveries (10 rules) exactly as ingest would, then times `hookrelay serve` draining it. */
export async function hookrelayDrain({ sinkPort, rows: DELIVERIES, concurrency: CONCURRENCY, serveCli = cli }) {
  const dataDir = mkdtempSync(join(tmpdir(), 'hookrelay-bench-'));
  const rulesDir = join(dataDir, 'rules');
  mkdirSync(rulesDir);
  deliveryRules(`http://127.0.0.1:${sinkPort}`, CONCURRENCY).forEach((text, i) => writeFileSync(join(rulesDir, `r${i}.yaml`), text));
  const rows = await fillOutbox(dataDir, rulesDir, DELIVERIES, (i) => sampleTransferSucceeded({ paymentMethod: i % 2 ? 'BUY_WITH_CARD' : 'BUY_WITH_CRYPTO' }));
  const config = join(dataDir, 'hookrelay.yaml');
  writeFileSync(config, `delivery:\n  allowNetworks: [127.0.0.1/32]\n  maxInFlight: ${CONCURRENCY}\n  batchSize: ${CONCURRENCY}\n`);
  await resetSink(sinkPort);
  const started = performance.now();
  const server = await startServer(process.execPath, serveCommand(serveCli), {
    env: { HOOKRELAY_PORT: '0', HOOKRELAY_HOST: '127.0.0.1', HOOKRELAY_DATA_DIR: dataDir, HOOKRELAY_RULES_DIR: rulesDir, HOOKRELAY_SECRET: SECRET, HOOKRELAY_CONFIG: config },
    readPort: readServePort,
  });
  let sink = { count: 0 };
  // CPU per delivery: the server's CPU time between the first poll that sees arrivals and the last one.
  let cpuFrom = null;
  while (sink.count < rows) {
    await new Promise((r) => setTimeout(r, 100));
    sink = await sinkCount(sinkPort);
    if (cpuFrom === null && sink.count > 0) cpuFrom = { cpu: cpuMs(server.child.pid), count: sink.count };
    if (performance.now() - started > 600_000) throw new Error(`only ${sink.count} of ${rows} delivered in 10 minutes`);
  }
  const cpuUs = cpuUsPer(server.child.pid, cpuFrom.cpu, rows - cpuFrom.count);
  // From the first arrival to the last, like the baseline: process start and rule loading are not delivery.
  const ms = sink.last - sink.first;
  // V8 prints its GC trace through stdio's buffer, complete only at exit: read before the log is removed.
  let gc = [];
  server.child.prependOnceListener('exit', () => (gc = gcByIsolate(server.logPath))); // empty unless BENCH_NODE_ARGS has --trace-gc-nvp
  await stopServer(server.child);
  rmSync(dataDir, { recursive: true, force: true });
  return { name: `hookrelay worker, ${rows} outbox rows, 10 rules`, deliveriesPerSec: Math.round(rows / (ms / 1000)), seconds: (ms / 1000).toFixed(1), cpuUs, gc };
}

