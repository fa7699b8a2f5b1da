// Baseline for bench:delivery, run as a child process: POSTs `total` bodies to `url` with `concurrency`
// requests in flight over keep-alive connections, then prints {"ms": elapsed, "cpuMs": CPU time used meanwhile}.
import { Agent, request } from 'undici';

const [url, total, concurrency, bodyBytes] = [process.argv[2], Number(process.argv[3]), Number(process.argv[4]), Number(process.argv[5])];
const body = Buffer.alloc(bodyBytes, 0x20);
const dispatcher = new Agent({ connections: concurrency });
let next = 0;
const started = performance.now();
const cpuBefore = process.cpuUsage();
async function lane() {
  while (next < total) {
    next += 1;
    const res = await request(url, { method: 'POST', body, headers: { 'content-type': 'application/json' }, dispatcher });
    await res.body.dump();
  }
}
await Promise.all(Array.from({ length: concurrency }, lane));
const cpu = process.cpuUsage(cpuBefore);
process.stdout.write(`${JSON.stringify({ ms: performance.now() - started, cpuMs: (cpu.user + cpu.system) / 1000 })}\n`);
await dispatcher.close();
