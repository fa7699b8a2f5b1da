// Baseline for bench:mixed, run as a child process: POSTs `rate` bodies a second for `seconds` to `url`
// over keep-alive connections, as an open loop (each millisecond, every POST that has fallen due), with the
// headers a delivery carries, then prints {"cpuUsPerPost": CPU time per POST}. What sending alone costs at
// the rate the delivery thread sends at; a closed loop at full speed (undici-loop.mjs) batches its writes
// and costs several times less per POST than any sender at a moderate rate.
import { Agent, request } from 'undici';

const [url, rate, seconds, bodyBytes] = [process.argv[2], Number(process.argv[3]), Number(process.argv[4]), Number(process.argv[5])];
const body = Buffer.alloc(bodyBytes, 0x20);
const headers = {
  'content-type': 'application/json',
  'user-agent': 'hookrelay-bench',
  'x-hookrelay-delivery-id': 'dlv_1',
  'x-hookrelay-event-id': '1',
  'x-hookrelay-rule-id': 'forward',
  'x-hookrelay-timestamp': '1700000000',
  'x-hookrelay-signature': `sha256=${'0'.repeat(64)}`,
};
// At most as many connections as a destination gets from hookrelay by default (`delivery.concurrency`): a sink
// that falls behind would otherwise get a new connection per waiting POST, until the file descriptors run out.
const dispatcher = new Agent({ connections: 256 });
const total = Math.round(rate * seconds);
let sent = 0;
let done = 0;
const post = async () => {
  const res = await request(url, { method: 'POST', body, headers, dispatcher });
  await res.body.dump();
  done += 1;
};
const cpuBefore = process.cpuUsage();
const started = performance.now();
await new Promise((resolve) => {
  const tick = () => {
    const due = Math.min(total, Math.floor(((performance.now() - started) / 1000) * rate));
    for (; sent < due; sent++) void post();
    if (sent < total) setTimeout(tick, 1);
    else resolve();
  };
  tick();
});
while (done < total) await new Promise((resolve) => setTimeout(resolve, 5));
const cpu = process.cpuUsage(cpuBefore);
process.stdout.write(`${JSON.stringify({ cpuUsPerPost: Math.round((cpu.user + cpu.system) / total) })}\n`);
await dispatcher.close();
