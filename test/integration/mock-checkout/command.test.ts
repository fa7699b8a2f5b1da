import { EventEmitter } from 'node:events';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Command } from 'commander';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/log.js';
import { registerMockCheckoutCommand } from '../../../src/mock-checkout/index.js';
import { makeTempDir, removeTempDirs } from '../../helpers/temp-dir.js';

interface RunningCommand {
  lines: string[];
  signals: EventEmitter;
  done: Promise<unknown>;
  url: string;
}

const running: RunningCommand[] = [];

afterEach(async () => {
  removeTempDirs();
  for (const command of running.splice(0)) {
    command.signals.emit('SIGTERM');
    await command.done;
  }
});

async function runCommand(args: string[], env: NodeJS.ProcessEnv = {}): Promise<RunningCommand> {
  const lines: string[] = [];
  const signals = new EventEmitter();
  const program = new Command().exitOverride();
  registerMockCheckoutCommand(program, { env, print: (line) => lines.push(line), signals, logger: createLogger('silent') });
  const done = program.parseAsync(['mock-checkout', '--port', '0', ...args], { from: 'user' });
  const deadline = Date.now() + 5000;
  while (!lines.some((line) => line.startsWith('Data:'))) {
    if (Date.now() > deadline) throw new Error(`command did not start: ${lines.join('\n')}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const url = /listening on (\S+)/.exec(lines[0]!)![1]!;
  const command = { lines, signals, done, url };
  running.push(command);
  return command;
}

function apiKeyLine(lines: string[]): string {
  return lines.find((line) => line.startsWith('API key:'))!;
}

describe('hookrelay mock-checkout', () => {
  it('prints the dashboard URL and a generated API key that the API accepts', async () => {
    const { lines, url } = await runCommand([]);
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(lines).toContain(`Dashboard: ${url}/dashboard`);
    const key = /API key:\s+(mock_\S+)/.exec(apiKeyLine(lines))![1]!;
    const response = await fetch(`${url}/api/v1/checkout`, { headers: { authorization: `Bearer ${key}` } });
    expect(response.status).toBe(200);
  });

  it('takes the key from HOOKRELAY_MOCK_API_KEY, or --api-key over it, without echoing it', async () => {
    const fromEnv = await runCommand([], { HOOKRELAY_MOCK_API_KEY: 'env-key-123' });
    expect(apiKeyLine(fromEnv.lines)).toBe('API key:   (from HOOKRELAY_MOCK_API_KEY)');
    expect((await fetch(`${fromEnv.url}/api/v1/checkout`, { headers: { authorization: 'Bearer env-key-123' } })).status).toBe(200);

    const fromFlag = await runCommand(['--api-key', 'flag-key-456'], { HOOKRELAY_MOCK_API_KEY: 'env-key-123' });
    expect(fromFlag.lines.join('\n')).not.toContain('flag-key-456');
    expect((await fetch(`${fromFlag.url}/api/v1/checkout`, { headers: { authorization: 'Bearer flag-key-456' } })).status).toBe(200);
    expect((await fetch(`${fromFlag.url}/api/v1/checkout`, { headers: { authorization: 'Bearer env-key-123' } })).status).toBe(401);
  });

  it('takes the webhook secret from HOOKRELAY_MOCK_WEBHOOK_SECRET or --webhook-secret-file, so it stays out of ps', async () => {
    const createdSecret = async (command: RunningCommand, key: string): Promise<string> => {
      const created = await fetch(`${command.url}/api/v1/checkout`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ contractAddress: `0x${'ab'.repeat(20)}`, collectionTitle: 'T', priceValue: 1, priceCurrency: 'USD' }),
      });
      return ((await created.json()) as { result: { webhookSecret: string } }).result.webhookSecret;
    };
    const fromEnv = await runCommand(['--api-key', 'k1'], { HOOKRELAY_MOCK_WEBHOOK_SECRET: 'secret-from-env' });
    expect(await createdSecret(fromEnv, 'k1')).toBe('secret-from-env');

    const file = join(makeTempDir(), 'webhook.secret');
    writeFileSync(file, 'secret-from-file\n');
    const fromFile = await runCommand(['--api-key', 'k2', '--webhook-secret-file', file], { HOOKRELAY_MOCK_WEBHOOK_SECRET: 'secret-from-env' });
    expect(await createdSecret(fromFile, 'k2')).toBe('secret-from-file');
    expect(fromFile.lines.join('\n')).not.toContain('secret-from-file');

    const fromFlag = await runCommand(['--api-key', 'k3', '--webhook-secret', 'secret-from-flag', '--webhook-secret-file', file]);
    expect(await createdSecret(fromFlag, 'k3')).toBe('secret-from-flag');
  });

  it('refuses a webhook secret file it cannot read, naming it', async () => {
    const program = new Command().exitOverride();
    registerMockCheckoutCommand(program, { env: {}, print: () => {}, signals: new EventEmitter(), logger: createLogger('silent') });
    const missing = join(makeTempDir(), 'absent.secret');
    await expect(program.parseAsync(['mock-checkout', '--port', '0', '--webhook-secret-file', missing], { from: 'user' })).rejects.toThrow(`--webhook-secret-file: cannot read ${missing}`);
  });

  it('uses --public-url in printed and returned links', async () => {
    const { lines, url } = await runCommand(['--api-key', 'k-public', '--public-url', 'https://mock.test/']);
    expect(lines).toContain('Dashboard: https://mock.test/dashboard');
    const created = await fetch(`${url}/api/v1/checkout`, {
      method: 'POST',
      headers: { authorization: 'Bearer k-public', 'content-type': 'application/json' },
      body: JSON.stringify({ contractAddress: `0x${'ab'.repeat(20)}`, collectionTitle: 'T', priceValue: 1, priceCurrency: 'USD' }),
    });
    const body = (await created.json()) as { checkoutUrl: string; result: { id: string } };
    expect(body.checkoutUrl).toBe(`https://mock.test/checkout/${body.result.id}`);
  });

  it.each(['SIGTERM', 'SIGINT'])('stops gracefully on %s', async (signal) => {
    const command = await runCommand([]);
    running.splice(running.indexOf(command), 1);
    command.signals.emit(signal);
    await command.done;
    expect(command.lines.slice(-2)).toEqual([`Received ${signal}, shutting down`, 'Mock checkout stopped']);
    await expect(fetch(`${command.url}/dashboard/login`)).rejects.toThrow();
  });

  it('rejects an invalid port', async () => {
    const program = new Command().exitOverride().configureOutput({ writeErr: () => undefined });
    registerMockCheckoutCommand(program, { env: {}, print: () => undefined, signals: new EventEmitter() });
    await expect(program.parseAsync(['mock-checkout', '--port', '70000'], { from: 'user' })).rejects.toThrow(/port number/);
  });
});
