// A backlog behind a busy destination (a rate limit, or slow answers at a concurrency limit): what the
// worker spends while the destination takes the rows at its own pace. Shared by bench:delivery.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fillOutbox, readServePort, resetSink, sinkCount } from './drain.mjs';
import { cpuMs, serveCommand, startServer, stopServer } from './run.mjs';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** The cases: a rule's limits, the sink's answer time and the backlog's size. */
export const BUSY_CASES = [
  { name: '2,000 rows, 5 per second', rule: 'rateLimit:\n  perSecond: 5\n', sinkDelayMs: 0, rows: 2_000 },
  { name: '2,000 rows, 2 slots, answers in 100 ms', rule: 'concurrency: 2\n', sinkDelayMs: 100, rows: 2_000 },
  { name: '20,000 rows, 4 slots, answers at once', rule: 'concurrency: 4\n', sinkDelayMs: 0, rows: 20_000 },
];

/**
 * `hookrelay serve` (`serveCli`) with `busyCase`'s backlog in its outbox: after `warmUpS` seconds, the server's
 * CPU and the deliveries over `seconds`.
 */
export async function busyDestination(busyCase, { serveCli, seconds = 10, warmUpS = 2 }) {
  const sink = await startServer(process.execPath, [join(root, 'bench/lib/counting-sink.mjs'), String(busyCase.sinkDelayMs)], {
    readPort: (line) => line.startsWith('{') && JSON.parse(line).port,
  });
  const dataDir = mkdtempSync(join(tmpdir(), 'hookrelay-bench-'));
  const rulesDir = join(dataDir, 'rules');
  mkdirSync(rulesDir);
  try {
    writeFileSync(join(rulesDir, 'busy.yaml'), `id: busy\non: [transfer:succeeded]\nto:\n  url: http://127.0.0.1:${sink.port}/busy\n${busyCase.rule}`);
    await fillOutbox(dataDir, rulesDir, busyCase.rows);
    const config = join(dataDir, 'hookrelay.yaml');
    writeFileSync(config, 'delivery:\n  allowNetworks: [127.0.0.1/32]\n');
    await resetSink(sink.port);
    const server = await startServer(process.execPath, serveCommand(serveCli), {
      env: { HOOKRELAY_PORT: '0', HOOKRELAY_HOST: '127.0.0.1', HOOKRELAY_DATA_DIR: dataDir, HOOKRELAY_RULES_DIR: rulesDir, HOOKRELAY_SECRET: 'bench-secret', HOOKRELAY_CONFIG: config },
      readPort: readServePort,
    });
    try {
      await new Promise((resolve) => setTimeout(resolve, warmUpS * 1000));
      const before = { cpu: cpuMs(server.child.pid), count: (await sinkCount(sink.port)).count };
      await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
      const cpu = cpuMs(server.child.pid) - before.cpu;
      const delivered = (await sinkCount(sink.port)).count - before.count;
      return {
        name: busyCase.name,
        deliveredPerSec: Math.round(delivered / seconds),
        cpuShare: `${((cpu / (seconds * 1000)) * 100).toFixed(1)} %`,
        cpuPerDeliveryUs: delivered > 0 ? Math.round((cpu * 1000) / delivered) : null,
      };
    } finally {
      await stopServer(server.child);
    }
  } finally {
    await stopServer(sink.child);
    rmSync(dataDir, { recursive: true, force: true });
  }
}
