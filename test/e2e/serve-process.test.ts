import { statSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { sampleTransferSucceeded } from '../../src/samples/transfer-succeeded.js';
import { signHmacSha256Hex } from '../../src/signing/hmac-sha256-hex.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { CLI_PATH, runCli, START_COMMAND, START_NODE_OPTIONS, startServeProcess } from '../helpers/cli-process.js';
import { postSigned } from '../helpers/http.js';
import { makeTempDir, removeTempDirs } from '../helpers/temp-dir.js';

afterAll(() => removeTempDirs());

const SECRET = 'e2e-secret';

describe('hookrelay serve as a process', () => {
  it('keeps every acknowledged event across a kill -9 right after the acknowledgements', async () => {
    const dataDir = makeTempDir();
    const env = { HOOKRELAY_DATA_DIR: dataDir, HOOKRELAY_RULES_DIR: makeTempDir(), HOOKRELAY_SECRET: SECRET };
    const server = await startServeProcess(env);
    const acknowledged = new Map<string, number>();
    const posts = Array.from({ length: 300 }, async () => {
      const body = sampleTransferSucceeded();
      const reply = await postSigned(`${server.url}/webhooks/checkout`, body, SECRET).catch(() => null);
      if (reply?.status === 200) acknowledged.set(body.result.id, reply.json.id);
    });
    // Kill as soon as the first acknowledgements are in, while others are still in flight.
    while (acknowledged.size < 100) await new Promise((r) => setTimeout(r, 1));
    server.child.kill('SIGKILL');
    await Promise.all(posts);
    expect((await server.exited).signal).toBe('SIGKILL');

    // The database is opened again by a new process, as after a crash.
    const restarted = await startServeProcess(env);
    restarted.child.kill('SIGTERM');
    await restarted.exited;
    const store = new SqliteStore({ dataDir, durability: 'full' });
    try {
      const lost: string[] = [];
      for (const [transferId, id] of acknowledged) {
        const event = await store.getEvent(id);
        if (event?.transferId !== transferId) lost.push(transferId);
      }
      expect(acknowledged.size).toBeGreaterThanOrEqual(100);
      expect(lost).toEqual([]);
    } finally {
      await store.close();
    }
  });

  it('refuses to start with an invalid setting and names it', async () => {
    const proc = runCli(['serve'], { env: { HOOKRELAY_PORT: 'eighty', HOOKRELAY_DATA_DIR: makeTempDir() } });
    const { code } = await proc.exited;
    expect(code).toBe(2);
    expect(proc.stderr()).toContain('HOOKRELAY_PORT');
    expect(proc.stderr()).not.toContain('    at ');
  });

  it('generates a secret on first start, keeps it (0600), prints it once, and accepts events signed with it', async () => {
    const dataDir = makeTempDir();
    const env = { HOOKRELAY_DATA_DIR: dataDir, HOOKRELAY_RULES_DIR: makeTempDir() };
    const first = await startServeProcess(env);
    const secretFile = join(dataDir, 'checkout.secret');
    const secret = readFileSync(secretFile, 'utf8').trim();
    expect(secret).toMatch(/^[0-9a-f]{64}$/);
    expect(statSync(secretFile).mode & 0o777).toBe(0o600);
    expect(first.stderr()).toContain(secret);
    expect(first.stderr()).toContain(`${first.url}/webhooks/checkout`);
    expect(first.stdout()).not.toContain(secret);
    expect((await postSigned(`${first.url}/webhooks/checkout`, sampleTransferSucceeded(), secret)).status).toBe(200);
    first.child.kill('SIGTERM');
    expect((await first.exited).code).toBe(0);

    const second = await startServeProcess(env);
    expect(second.stderr()).not.toContain(secret);
    expect((await postSigned(`${second.url}/webhooks/checkout`, sampleTransferSucceeded(), secret)).status).toBe(200);
    second.child.kill('SIGTERM');
    await second.exited;
  });

  it('finishes an in-flight request on SIGTERM, then exits 0', async () => {
    const env = { HOOKRELAY_DATA_DIR: makeTempDir(), HOOKRELAY_RULES_DIR: makeTempDir(), HOOKRELAY_SECRET: SECRET };
    const server = await startServeProcess(env);
    const raw = Buffer.from(JSON.stringify(sampleTransferSucceeded()));
    const url = new URL(`${server.url}/webhooks/checkout`);
    const reply = new Promise<{ status: number; body: string; connection: string | undefined }>((resolve, reject) => {
      const req = httpRequest({ host: url.hostname, port: url.port, path: url.pathname, method: 'POST', headers: { 'content-type': 'application/json', 'content-length': raw.length, 'x-service-signature': signHmacSha256Hex(SECRET, raw) } }, (res) => {
        let body = '';
        res.on('data', (c) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode!, body, connection: res.headers.connection }));
      });
      req.on('error', reject);
      req.write(raw.subarray(0, 10));
      // Half the body is sent; the shutdown starts; then the rest arrives.
      setTimeout(() => {
        server.child.kill('SIGTERM');
        setTimeout(() => req.end(raw.subarray(10)), 200);
      }, 100);
    });
    const answer = await reply;
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body)).toMatchObject({ duplicate: false });
    // The client would otherwise keep a socket that is about to close for its next request.
    expect(answer.connection).toBe('close');
    expect((await server.exited).code).toBe(0);
    expect(server.stdout()).toContain('"msg":"stopped"');
  });
});

describe('the start command', () => {
  it('is the same for npm start and the Docker image', () => {
    const dockerfile = readFileSync(new URL('../../Dockerfile', import.meta.url), 'utf8');
    const cmd = /^CMD (\[.*\])$/m.exec(dockerfile)?.[1];
    expect(cmd).toBeDefined();
    expect(JSON.parse(cmd!)).toEqual(START_COMMAND);
    expect(START_COMMAND.slice(-2)).toEqual(['dist/cli.js', 'serve']);
  });

  it('binds every interface in the Docker image, with the admin surface on a port of its own', () => {
    const dockerfile = readFileSync(new URL('../../Dockerfile', import.meta.url), 'utf8');
    const runtime = dockerfile.slice(dockerfile.lastIndexOf('FROM '));
    for (const setting of ['HOOKRELAY_HOST=0.0.0.0', 'HOOKRELAY_PORT=8080', 'HOOKRELAY_ADMIN_HOST=0.0.0.0', 'HOOKRELAY_ADMIN_PORT=8081']) expect(runtime).toContain(setting);
    expect(runtime).toMatch(/^EXPOSE 8080 8081$/m);
  });

  it('caps the young generation, so a busy receiver stays small', async () => {
    expect(START_NODE_OPTIONS).toContain('--max-semi-space-size=4');
    expect(START_NODE_OPTIONS).toContain('--initial-old-space-size=40'); // first full GC at 32 MiB: lower peak RSS
    const server = await startServeProcess({ HOOKRELAY_DATA_DIR: makeTempDir(), HOOKRELAY_RULES_DIR: makeTempDir(), HOOKRELAY_SECRET: SECRET });
    try {
      // Enough garbage that an uncapped young generation grows past two 4 MiB semi-spaces (it reaches 32 MiB).
      await Promise.all(Array.from({ length: 400 }, () => postSigned(`${server.url}/webhooks/checkout`, sampleTransferSucceeded(), SECRET)));
      const metrics = await (await fetch(`${server.url}/metrics`)).text();
      const newSpace = Number(/^nodejs_heap_space_size_total_bytes\{space="new"\} (\d+)/m.exec(metrics)?.[1]);
      expect(newSpace).toBeGreaterThan(0);
      expect(newSpace).toBeLessThanOrEqual(2 * 4 * 1024 * 1024);
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
    }
  });
});

describe('hookrelay sign and send-test', () => {
  it('sign prints the header a sender would send for the file', async () => {
    const dir = makeTempDir();
    const file = join(dir, 'body.json');
    writeFileSync(file, '{"event":"transfer:succeeded"}');
    const proc = runCli(['sign', '--secret', 'k', file]);
    expect((await proc.exited).code).toBe(0);
    expect(proc.stdout().trim()).toBe(`X-Service-Signature: ${signHmacSha256Hex('k', '{"event":"transfer:succeeded"}')}`);
    const piped = runCli(['sign', '--secret', 'k'], { input: 'abc' });
    await piped.exited;
    expect(piped.stdout().trim()).toBe(`X-Service-Signature: ${signHmacSha256Hex('k', 'abc')}`);
  });

  it('sign and events resend say what a standard-webhooks secret must look like instead of a decoder error', async () => {
    const proc = runCli(['sign', '--scheme', 'standard-webhooks', '--secret', 'abc'], { input: '{}' });
    expect((await proc.exited).code).toBe(1);
    expect(proc.stderr()).toBe('hookrelay: --secret is not a standard-webhooks secret: it must be a whsec_… base64 key: whsec_ followed by base64, e.g. whsec_ and the output of `openssl rand -base64 32`.\n');
    const good = runCli(['sign', '--scheme', 'standard-webhooks', '--secret', 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'], { input: '{}' });
    expect((await good.exited).code).toBe(0);
    expect(good.stdout()).toMatch(/^webhook-signature: v1,/m);
    const resend = runCli(['events', 'resend', '1', '--to', 'http://127.0.0.1:9/x', '--sign', 'standard-webhooks', '--secret', 'abc', '--data-dir', makeTempDir()]);
    expect((await resend.exited).code).toBe(1);
    expect(resend.stderr()).toContain('hookrelay: --secret is not a standard-webhooks secret: it must be a whsec_… base64 key');
  });

  it('send-test delivers a realistic signed sample that the receiver stores, and fails with exit 1 on 401', async () => {
    const env = { HOOKRELAY_DATA_DIR: makeTempDir(), HOOKRELAY_RULES_DIR: makeTempDir(), HOOKRELAY_SECRET: SECRET };
    const server = await startServeProcess(env);
    try {
      // A data dir of its own: send-test keeps the last body there, never in the live ./data.
      const ok = runCli(['send-test', '--url', `${server.url}/webhooks/checkout`, '--secret', SECRET], { env: { HOOKRELAY_DATA_DIR: env.HOOKRELAY_DATA_DIR } });
      expect((await ok.exited).code).toBe(0);
      expect(ok.stdout()).toMatch(/^HTTP 200\n\{"id":1,"duplicate":false/);
      const bad = runCli(['send-test', '--url', `${server.url}/webhooks/checkout`, '--secret', 'nope'], { env: { HOOKRELAY_DATA_DIR: env.HOOKRELAY_DATA_DIR } });
      expect((await bad.exited).code).toBe(1);
      expect(bad.stdout()).toContain('HTTP 401');
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
    }
  });

  it('every command has --help', async () => {
    for (const command of ['serve', 'sign', 'send-test']) {
      const proc = runCli([command, '--help']);
      expect((await proc.exited).code).toBe(0);
      expect(proc.stdout()).toContain(`Usage: hookrelay ${command}`);
    }
  });
});

describe('serve logs', () => {
  const env = () => ({ HOOKRELAY_HOST: '127.0.0.1', HOOKRELAY_PORT: '0', HOOKRELAY_DATA_DIR: makeTempDir(), HOOKRELAY_RULES_DIR: makeTempDir(), HOOKRELAY_SECRET: SECRET });
  const withoutColours = (text: string): string => text.replace(/\x1b\[[0-9;]*m/g, '');

  it('are readable lines on a terminal', async () => {
    // `script` gives the server a pseudo-terminal as stdout, as an operator's shell does; Ctrl-C stops it.
    const command = `exec ${[process.execPath, ...START_NODE_OPTIONS, CLI_PATH, 'serve'].map((word) => `'${word}'`).join(' ')}`;
    const terminal = spawn('script', ['-qec', command, '/dev/null'], { env: { PATH: process.env.PATH ?? '', ...env() }, stdio: ['pipe', 'pipe', 'pipe'] });
    let output = '';
    terminal.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => terminal.on('exit', (code) => resolve(code)));
    try {
      await vi.waitFor(() => expect(output).toContain('hookrelay listening'), { timeout: 15_000, interval: 50 });
      terminal.stdin.write('\x03');
      expect(await exited).toBe(0);
    } finally {
      terminal.kill('SIGKILL');
    }
    const text = withoutColours(output);
    expect(text).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: hookrelay listening \{"url":"http:\/\/127\.0\.0\.1:\d+"/m);
    expect(text).toMatch(/INFO: stopped/);
    expect(text).not.toMatch(/^\{"level"/m);
  });

  it('are JSON when stdout is not a terminal, and pretty or JSON as HOOKRELAY_LOG_FORMAT says', async () => {
    const json = await startServeProcess(env());
    json.child.kill('SIGTERM');
    await json.exited;
    expect(json.stdout().trim().split('\n').map((line) => JSON.parse(line).msg)).toContain('stopped');

    const pretty = runCli(['serve'], { env: { ...env(), HOOKRELAY_LOG_FORMAT: 'pretty' } });
    await vi.waitFor(() => expect(pretty.stdout()).toContain('hookrelay listening'), { timeout: 15_000, interval: 50 });
    pretty.child.kill('SIGTERM');
    await pretty.exited;
    const text = withoutColours(pretty.stdout());
    expect(text).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: hookrelay listening /m);
    expect(text).not.toMatch(/^\{/m);
  });
});
