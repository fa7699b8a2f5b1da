// SSE clients of bench:stream, in a process of their own so that reading 50 streams does not slow the
// load generator: opens `count` streams on GET /admin/api/events/stream, says "ready" once all are open,
// and on "stop" sends back, per client, when each event id arrived (epoch ms, sub-millisecond).
import { get } from 'node:http';

const [port, count, token] = [Number(process.argv[2]), Number(process.argv[3]), process.argv[4]];
const now = () => performance.timeOrigin + performance.now();
const clients = Array.from({ length: count }, () => {
  const arrivals = {};
  let tail = '';
  let res;
  const opened = new Promise((resolve, reject) => {
    const req = get({ host: '127.0.0.1', port, path: '/admin/api/events/stream', headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' } }, (response) => {
      res = response;
      response.setEncoding('utf8');
      response.on('data', (chunk) => {
        const at = now();
        const text = tail + chunk;
        const cut = text.lastIndexOf('\n');
        tail = text.slice(cut + 1);
        for (const match of text.slice(0, cut).matchAll(/^id: (\d+)$/gm)) arrivals[match[1]] ??= at;
        if (text.includes('event: ready')) resolve();
      });
      response.on('error', () => {});
    });
    req.on('error', reject);
  });
  return { opened, arrivals, close: () => res?.destroy() };
});
await Promise.all(clients.map((c) => c.opened));
process.send('ready');
process.on('message', (message) => {
  if (message !== 'stop') return;
  for (const client of clients) client.close();
  process.send({ arrivals: clients.map((c) => c.arrivals) }, () => process.exit(0));
});
