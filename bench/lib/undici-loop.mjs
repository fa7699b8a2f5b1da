// Baseline for bench:delivery, run as a child process: POSTs `total` bodies to `url` with `concurrency`
// requests in flight over keep-alive connections, then prints {"ms": elapsed}.
import { Agent, request } from 'undici';

const [url, total, concurrency, bodyBytes] = [process.argv[2], Number(process.argv[3]), Number(process.argv[4]), Number(process.argv[5])];
const body = Buffer.alloc(bodyBytes, 0x20);
const dispatcher = new Agent({ connections: concurrency });
let next = 0;
const started = performance.now();
async function lane() {
  while (next < total) {
    next += 1;
    const res = await request(url, { method: 'POST', body, headers: { 'content-type': 'application/json' }, dispatcher });
    await res.body.dump();
  }
}
await Promise.all(Array.from({ length: concurrency }, lane));
process.stdout.write(`${JSON.stringify({ ms: performance.now() - started })}\n`);
await dispatcher.close();
