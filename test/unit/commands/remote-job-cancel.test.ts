import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { RemoteTarget } from '../../../src/commands/remote-target.js';

// A stand-in admin API for one job: running until it is polled again, then done (the job finished on its
// own); cancelled if the cancel comes first. The order of the calls is what the CLI did.
function jobServer(): Promise<{ server: Server; url: string; calls: string[] }> {
  const calls: string[] = [];
  const job = (state: string) => ({ id: 7, kind: 'retry', state, total: 400, processed: state === 'done' ? 400 : 200, created: 0, failed: 0, error: null, summary: null });
  const server = createServer((req, res) => {
    calls.push(`${req.method} ${req.url}`);
    req.resume();
    req.on('end', () => {
      const state = req.method === 'GET' ? 'done' : req.url?.endsWith('/cancel') ? 'cancelled' : 'running';
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(job(state)));
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, calls })));
}

describe('a remote bulk job followed by the CLI', () => {
  let server: Server | undefined;
  afterEach(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

  it('asks for the cancel as soon as Ctrl-C comes, not after its next poll of the job', async () => {
    const api = await jobServer();
    server = api.server;
    const controller = new AbortController();
    const progress: number[] = [];
    const target = new RemoteTarget(api.url, 'token');
    const result = target.retryDeliveries({}, { signal: controller.signal, onProgress: (p) => progress.push(p.processed) });
    // Ctrl-C while the CLI waits between two polls of the job.
    await new Promise((resolve) => setTimeout(resolve, 30));
    controller.abort();
    const ended = await result;
    expect(api.calls).toEqual(['POST /admin/api/deliveries/retry', 'POST /admin/api/jobs/7/cancel']);
    expect(ended).toMatchObject({ state: 'cancelled', jobId: '7', processed: 200 });
    expect(progress.at(-1)).toBe(200);
  });
});
