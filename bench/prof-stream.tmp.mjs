import { fork } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHmac, randomUUID } from 'node:crypto';
import { fixedRateLoad, rawPost } from './lib/fixed-rate.mjs';
import { BENCH_ADMIN_TOKEN, cpuMs, serveCommand, startServer, stopServer } from './lib/run.mjs';
const SECRET = 'bench-secret';
const cli = process.env.BENCH_CLI ?? join(process.cwd(), 'dist/cli.js');
const streams = Number(process.env.STREAMS ?? 50);
const rate = Number(process.env.RATE ?? 1500);
const dataDir = mkdtempSync(join(tmpdir(), 'prof-'));
const env = { HOOKRELAY_PORT: '0', HOOKRELAY_HOST: '127.0.0.1', HOOKRELAY_DATA_DIR: dataDir, HOOKRELAY_RULES_DIR: join(dataDir, 'rules'), HOOKRELAY_SECRET: SECRET, HOOKRELAY_DURABILITY: 'full', HOOKRELAY_LOG_LEVEL: 'info' };
const readPort = (line) => line.includes('"hookrelay listening"') && Number(new URL(JSON.parse(line).url).port);
const server = await startServer(process.execPath, serveCommand(cli), { env, readPort });
const template = JSON.stringify({ event: 'transfer:succeeded', result: { id: '00000000-0000-4000-8000-000000000000', checkoutId: '7f3c2a9e-1b4d-4c8e-9f6a-2d5e8b1c0a47', walletAddress: '0x8ba1f109551bd432803012645ac136ddd64dba72', walletType: 'EMBEDDED', email: 'buyer.name@example.com', quantity: 2, paymentMethod: 'BUY_WITH_CARD', networkFeeUsd: 0.02, totalPriceUsd: 49.02, createdAt: '2026-11-22T14:19:22.123+00:00', paymentCompletedAt: '2026-11-22T14:19:24.273+00:00', transferCompletedAt: '2026-11-22T14:19:33.693+00:00', claimedTokens: { tokenIds: ['4711', '4712'], transactionHashes: { '0x5c504ed432cb51138bcf09aa5e8a410dd4a1e204ef84bfed1be16dfba1b22060': ['4711', '4712'] } } } });
const body = () => { const b = template.replace('00000000-0000-4000-8000-000000000000', randomUUID()); return rawPost('/webhooks/checkout', { 'content-type': 'application/json', 'x-service-signature': createHmac('sha256', SECRET).update(b).digest('hex') }, b); };
let child;
if (streams > 0) {
  child = fork('bench/lib/stream-clients.mjs', [String(server.port), String(streams), BENCH_ADMIN_TOKEN, 'nomarker'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  await new Promise((r) => child.once('message', r));
}
await fixedRateLoad({ port: server.port, rate, seconds: 1, connections: 50, requests: Array.from({ length: rate }, body) });
const before = cpuMs(server.child.pid);
const r = await fixedRateLoad({ port: server.port, rate, seconds: 8, connections: 50, requests: Array.from({ length: rate * 8 }, body) });
console.log('failed', r.failed, 'ok', r.ok, 'p50', r.p50, 'p99', r.p99, 'cpuUs/req', Math.round((cpuMs(server.child.pid) - before) * 1000 / r.sent));
if (child) { child.send('stop'); await new Promise((r) => child.once('message', r)); }
await stopServer(server.child);
