import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { sampleTransferSucceeded } from '../../src/samples/transfer-succeeded.js';
import { verifyHmacSha256Hex } from '../../src/signing/hmac-sha256-hex.js';
import { runCli, startServeProcess, type CliProcess } from '../helpers/cli-process.js';
import { freeLoopbackPort, postSigned } from '../helpers/http.js';
import { startTestReceiver, TEST_SECRET, type TestReceiver } from '../helpers/receiver.js';
import { makeTempDir, removeTempDirs } from '../helpers/temp-dir.js';
import { startWebhookSink, type WebhookSink } from '../helpers/webhook-sink.js';

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});
afterAll(() => removeTempDirs());

async function receiver(): Promise<TestReceiver> {
  const app = await startTestReceiver({ delivery: { enabled: false } });
  cleanup.push(() => app.close());
  return app;
}

async function sink(): Promise<WebhookSink> {
  const started = await startWebhookSink();
  cleanup.push(() => started.close());
  return started;
}

function listen(app: TestReceiver, args: string[], format: 'json' | 'text' = 'json'): CliProcess {
  const cli = runCli(['listen', '--url', app.adminUrl, '--token', app.adminToken, ...(format === 'json' ? ['--json'] : []), ...args]);
  cleanup.push(async () => {
    if (cli.child.exitCode === null) cli.child.kill('SIGKILL');
    await cli.exited;
  });
  return cli;
}

async function until(what: string, check: () => boolean, cli: CliProcess, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; stdout:\n${cli.stdout().slice(-2000)}\nstderr:\n${cli.stderr()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const printedEvents = (cli: CliProcess): Record<string, any>[] =>
  cli
    .stdout()
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, any>);

describe('hookrelay listen', () => {
  it('forwards 1,000 events to a local endpoint in order, byte-exact, with a signature the verifier accepts; Ctrl-C stops it', async () => {
    const app = await receiver();
    const target = await sink();
    const cli = listen(app, ['--forward-to', target.url]);
    await until('listening', () => cli.stderr().includes('listening on'), cli);

    const ids: number[] = [];
    for (let batch = 0; batch < 50; batch += 1) {
      const replies = await Promise.all(Array.from({ length: 20 }, () => postSigned(app.webhookUrl(), sampleTransferSucceeded(), TEST_SECRET)));
      for (const reply of replies) {
        expect(reply.status).toBe(200);
        ids.push(reply.json.id as number);
      }
    }
    ids.sort((a, b) => a - b);
    await target.waitFor(1000, 60_000);
    await until('1,000 lines', () => printedEvents(cli).length === 1000, cli);

    const printed = printedEvents(cli);
    expect(printed.map((line) => line.id)).toEqual(ids);
    expect(printed.every((line) => line.forward.status === 200 && line.forward.error === null)).toBe(true);
    for (const [index, id] of ids.entries()) {
      const stored = (await app.store.getEvent(id))!;
      const received = target.received[index]!;
      expect(received.rawBody.equals(stored.body)).toBe(true);
      expect(received.headers['content-type']).toBe(stored.headers['content-type']);
      expect(verifyHmacSha256Hex([TEST_SECRET], received.rawBody, String(received.headers['x-service-signature']))).toBe(true);
    }

    cli.child.kill('SIGINT');
    const exit = await cli.exited;
    expect(exit.code).toBe(130);
    expect(cli.stderr()).toContain('stopped');
  }, 180_000);

  it('plays --since first, re-signs with --sign-secret, and goes on past a target that is down', async () => {
    const app = await receiver();
    const before = [];
    for (let i = 0; i < 3; i += 1) before.push((await postSigned(app.webhookUrl(), sampleTransferSucceeded(), TEST_SECRET)).json.id as number);
    const secret = `whsec_${Buffer.from('a listen test secret of 32 bytes').toString('base64')}`;
    const down = `http://127.0.0.1:${await freeLoopbackPort()}/hook`;
    const cli = listen(app, ['--forward-to', down, '--since', '10m', '--sign-secret', secret, '--sign-scheme', 'standard-webhooks']);
    await until('3 failed forwards', () => printedEvents(cli).length === 3, cli);
    expect(printedEvents(cli).map((line) => line.id)).toEqual(before);
    expect(printedEvents(cli).every((line) => line.forward.status === null && line.forward.error === 'ECONNREFUSED')).toBe(true);
    cli.child.kill('SIGINT');
    expect((await cli.exited).code).toBe(130);

    // Against a live endpoint the re-signed request passes a Standard Webhooks verifier.
    const target = await sink();
    const again = listen(app, ['--forward-to', target.url, '--since', String(before[1]), '--sign-secret', secret, '--sign-scheme', 'standard-webhooks']);
    await target.waitFor(1, 15_000);
    const [received] = target.received;
    const stored = (await app.store.getEvent(before[2]!))!;
    expect(received!.rawBody.equals(stored.body)).toBe(true);
    const headers = Object.fromEntries(Object.entries(received!.headers).map(([name, value]) => [name, String(value)]));
    expect(() => new Webhook(secret).verify(received!.rawBody.toString('utf8'), headers)).not.toThrow();
    again.child.kill('SIGINT');
    await again.exited;
  });

  it('reconnects after the server restarts and resumes after the last event', async () => {
    const app = await receiver();
    const cli = listen(app, []);
    await until('listening', () => cli.stderr().includes('listening on'), cli);
    const first = (await postSigned(app.webhookUrl(), sampleTransferSucceeded(), TEST_SECRET)).json.id as number;
    await until('the first event', () => printedEvents(cli).length === 1, cli);
    const { port, dataDir } = app;
    await app.close();
    cleanup.splice(0, 1);
    const restarted = await startTestReceiver({ delivery: { enabled: false }, dataDir, port, admin: { token: app.adminToken } });
    cleanup.unshift(() => restarted.close());
    const second = (await postSigned(restarted.webhookUrl(), sampleTransferSucceeded(), TEST_SECRET)).json.id as number;
    await until('the event stored while it was away', () => printedEvents(cli).length === 2, cli, 30_000);
    expect(printedEvents(cli).map((line) => line.id)).toEqual([first, second]);
    expect(cli.stderr()).toContain('the server ended the stream');
    expect(cli.stderr()).toContain(`reconnecting in 0.5 s, after event ${first}`);
  });

  it('prints one readable line per event: time, id, event, checkout, amount, and the local answer', async () => {
    const app = await receiver();
    const target = await sink();
    const cli = listen(app, ['--forward-to', target.url], 'text');
    await until('listening', () => cli.stderr().includes('listening on'), cli);
    const body = sampleTransferSucceeded({ quantity: 2, unitPriceUsd: 24.5 });
    const id = (await postSigned(app.webhookUrl(), body, TEST_SECRET)).json.id as number;
    await until('a line', () => cli.stdout().includes('\n'), cli);
    const stored = (await app.store.getEvent(id))!;
    const line = cli.stdout().trim();
    expect(line.startsWith(`${new Date(stored.receivedAt).toISOString()}  #${id}  transfer:succeeded  checkout ${body.result.checkoutId}  49.02 USD  → 200 in `)).toBe(true);
    expect(line).toMatch(/ ms$/);
  });

  it('local mode: follows a data dir that a running server writes, and goes on with no server at all', async () => {
    const dataDir = makeTempDir();
    const env = { HOOKRELAY_DATA_DIR: dataDir, HOOKRELAY_RULES_DIR: makeTempDir(), HOOKRELAY_SECRET: 's' };
    const server = await startServeProcess(env);
    cleanup.push(async () => {
      if (server.child.exitCode === null) server.child.kill('SIGKILL');
      await server.exited;
    });
    const post = async (): Promise<number> => {
      const reply = await postSigned(`${server.url}/webhooks/checkout`, sampleTransferSucceeded(), 's');
      expect(reply.status).toBe(200);
      return reply.json.id as number;
    };
    const earlier = [await post(), await post()];
    const target = await sink();
    const follow = (args: string[]): CliProcess => {
      const cli = runCli(['listen', '--data-dir', dataDir, '--json', '--forward-to', target.url, ...args], { env: { HOOKRELAY_RULES_DIR: makeTempDir() } });
      cleanup.push(async () => {
        if (cli.child.exitCode === null) cli.child.kill('SIGKILL');
        await cli.exited;
      });
      return cli;
    };
    const cli = follow(['--since', '10m']);
    await until('the earlier events', () => printedEvents(cli).length === 2, cli);
    // The server goes on acknowledging while the reader follows its file.
    const live: number[] = [];
    for (let batch = 0; batch < 10; batch += 1) live.push(...(await Promise.all(Array.from({ length: 20 }, post))));
    live.sort((a, b) => a - b);
    await until('every event', () => printedEvents(cli).length === 202, cli);
    expect(printedEvents(cli).map((line) => line.id)).toEqual([...earlier, ...live]);
    expect(printedEvents(cli).every((line) => line.forward.status === 200)).toBe(true);
    await target.waitFor(202, 30_000);
    for (const received of target.received) {
      expect(verifyHmacSha256Hex(['s'], received.rawBody, String(received.headers['x-service-signature']))).toBe(true);
    }
    expect(target.received.map((r) => JSON.parse(r.rawBody.toString()).result.id as string)).toHaveLength(202);
    cli.child.kill('SIGINT');
    expect((await cli.exited).code).toBe(130);

    // No server running: the data dir alone, from an event id on.
    server.child.kill('SIGTERM');
    await server.exited;
    const alone = follow(['--since', String(live[197])]);
    await until('the last two events', () => printedEvents(alone).length === 2, alone);
    expect(printedEvents(alone).map((line) => line.id)).toEqual(live.slice(198));
    expect(alone.stderr()).toContain(`listening to ${dataDir}`);
    alone.child.kill('SIGINT');
    expect((await alone.exited).code).toBe(130);
  }, 180_000);

  it('says once that old Standard Webhooks signatures have expired, and refuses a bad --since', async () => {
    const dataDir = makeTempDir();
    const app = await startTestReceiver({ delivery: { enabled: false }, dataDir });
    cleanup.push(() => app.close());
    const body = Buffer.from(JSON.stringify(sampleTransferSucceeded()));
    const old = Math.floor(Date.now() / 1000) - 3600;
    await app.store.importEvents([{
      source: 'checkout', event: 'transfer:succeeded', transferId: 'old-1', checkoutId: null, email: null, walletAddress: null, validation: 'valid',
      receivedAt: Date.now(), lastReceivedAt: Date.now(), receivedCount: 1, body,
      headers: { 'content-type': 'application/json', 'webhook-id': 'msg_1', 'webhook-timestamp': String(old), 'webhook-signature': 'v1,AAAA' },
    }]);
    const target = await sink();
    const cli = listen(app, ['--forward-to', target.url, '--since', '1h']);
    await until('one line', () => printedEvents(cli).length === 1, cli);
    expect(cli.stderr()).toContain('older than 5 minutes');
    expect(cli.stderr()).toContain('--sign-secret');
    cli.child.kill('SIGINT');
    await cli.exited;

    const bad = runCli(['listen', '--data-dir', dataDir, '--since', 'yesterday']);
    const exit = await bad.exited;
    expect(exit.code).not.toBe(0);
    expect(bad.stderr()).toContain('--since must be an event id');
  }, 120_000);
});
