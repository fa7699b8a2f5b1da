import { Writable } from 'node:stream';
import { describe, expect, it, vi } from 'vitest';
import { spawnSync } from 'node:child_process';
import { BatchedDestination, chooseLogFormat, createLogDestination, createLogger, isoTimeOncePerMs } from '../../src/log.js';

function capturingLogger(): { logger: ReturnType<typeof createLogger>; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()));
      done();
    },
  });
  return { logger: createLogger('info', destination), lines };
}

describe('log lines', () => {
  it('never carry credentials, signatures or secrets', () => {
    const { logger, lines } = capturingLogger();
    const headers = { authorization: 'Bearer abc', cookie: 'session=abc', 'x-service-signature': 'sha256=abc', 'webhook-signature': 'v1,abc', 'content-type': 'application/json' };
    logger.info({ req: { method: 'POST', headers: { ...headers } }, headers: { ...headers }, secret: 's1', secrets: ['s2'], token: 't1' }, 'with secrets');
    const line = lines[0]!;
    expect(JSON.stringify(line)).not.toMatch(/abc|s1|s2|t1/);
    expect(line.req).toEqual({ method: 'POST', headers: { authorization: '[redacted]', cookie: '[redacted]', 'x-service-signature': '[redacted]', 'webhook-signature': '[redacted]', 'content-type': 'application/json' } });
    expect(line.headers).toMatchObject({ authorization: '[redacted]', cookie: '[redacted]', 'x-service-signature': '[redacted]', 'content-type': 'application/json' });
    expect([line.secret, line.secrets, line.token]).toEqual(['[redacted]', '[redacted]', '[redacted]']);
  });

  it('keep every other field as logged, and leave the logged object untouched', () => {
    const { logger, lines } = capturingLogger();
    const fields = { reqId: 'r-1', source: 'checkout', status: 200, durationMs: 1.25, headers: { 'x-service-signature': 'sha256=abc' } };
    logger.info(fields, 'ingest');
    expect(lines[0]).toMatchObject({ msg: 'ingest', reqId: 'r-1', source: 'checkout', status: 200, durationMs: 1.25, service: 'hookrelay' });
    expect(fields.headers['x-service-signature']).toBe('sha256=abc');
  });
});

describe('log format', () => {
  it.each([
    [undefined, true, 'pretty'],
    [undefined, false, 'json'],
    ['json', true, 'json'],
    ['pretty', false, 'pretty'],
  ] as const)('configured %s, terminal %s: %s', (configured, isTTY, expected) => {
    expect(chooseLogFormat(configured, isTTY)).toBe(expected);
  });

  it('pretty prints one readable line per entry, still without secrets', async () => {
    let text = '';
    const output = new Writable({
      write(chunk: Buffer, _encoding, done) {
        text += chunk.toString();
        done();
      },
    });
    const logger = createLogger('info', await createLogDestination('pretty', output));
    logger.info({ status: 200, token: 'secret-token' }, 'request done');
    await vi.waitFor(() => expect(text).toContain('\n'));
    const plain = text.replace(/\x1b\[[0-9;]*m/g, '');
    expect(plain).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: request done \{"status":200,"token":"\[redacted\]"\}\n$/);
  });
});

describe('BatchedDestination', () => {
  function fakeOut() {
    const writes: string[] = [];
    let flushed = 0;
    return { writes, flushed: () => flushed, out: { write: (lines: Buffer) => void writes.push(lines.toString('utf8')), flush: (cb?: () => void) => { flushed += 1; cb?.(); }, flushSync: () => void (flushed += 1) } };
  }
  const msgs = (write: string) => write.split('\n').filter(Boolean).map((line) => JSON.parse(line).msg);

  it('hands the lines logged within the delay to the stream as one write, once the delay is over', async () => {
    const { writes, out } = fakeOut();
    const logger = createLogger('info', new BatchedDestination(out, { maxDelayMs: 50 }));
    logger.info('one');
    await new Promise((resolve) => setImmediate(resolve));
    logger.info('two');
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(writes).toEqual([]);
    await vi.waitFor(() => expect(writes).toHaveLength(1));
    expect(msgs(writes[0]!)).toEqual(['one', 'two']);
    logger.info('three');
    await vi.waitFor(() => expect(writes).toHaveLength(2));
    expect(msgs(writes[1]!)).toEqual(['three']);
  });

  it('writes what waits first when a line might not fit, and a line longer than the batch on its own', () => {
    const { writes, out } = fakeOut();
    // Room for any line of up to 40 UTF-16 units (3 bytes each at most in UTF-8).
    const destination = new BatchedDestination(out, { maxDelayMs: 60_000, maxBytes: 120 });
    destination.write('{"msg":"first, caf\u00e9 \u2615"}\n');
    destination.write('{"msg":"second line"}\n');
    expect(writes).toEqual([]);
    destination.write('{"msg":"third, it waits"}\n');
    expect(writes).toEqual(['{"msg":"first, caf\u00e9 \u2615"}\n{"msg":"second line"}\n']);
    const long = `{"msg":"${'x'.repeat(60)}"}\n`;
    destination.write(long);
    expect(writes).toEqual(['{"msg":"first, caf\u00e9 \u2615"}\n{"msg":"second line"}\n', '{"msg":"third, it waits"}\n', long]);
    destination.write('{"msg":"after"}\n');
    destination.flushSync();
    expect(writes.at(-1)).toBe('{"msg":"after"}\n');
    destination.flushSync();
    expect(writes).toHaveLength(4);
  });

  it('writes what is pending before it flushes', () => {
    const { writes, flushed, out } = fakeOut();
    const destination = new BatchedDestination(out);
    destination.write('{"msg":"last"}\n');
    destination.flushSync();
    expect(writes).toEqual(['{"msg":"last"}\n']);
    expect(flushed()).toBe(1);
    destination.flushSync();
    expect(writes).toHaveLength(1);
  });

  it('lets the process exit while lines wait, and writes them as it exits', async () => {
    const logModule = new URL('../../dist/log.js', import.meta.url).href;
    const script = `import { createLogDestination, createLogger } from ${JSON.stringify(logModule)};
      const logger = createLogger('info', await createLogDestination('json'));
      logger.info('last words'); if (process.argv[1] === 'exit') process.exit(3);`;
    for (const [how, code] of [['return', 0], ['exit', 3]] as const) {
      const { stdout, status } = spawnSync(process.execPath, ['--input-type=module', '-e', script, how], { encoding: 'utf8', timeout: 10_000 });
      expect(status).toBe(code);
      expect(stdout.trim().split('\n').map((line) => JSON.parse(line).msg)).toEqual(['last words']);
    }
  });
});

describe('isoTimeOncePerMs', () => {
  it('gives the time field pino\'s isoTime gives, formatted again only when the millisecond changes', () => {
    let now = Date.UTC(2026, 10, 28, 9, 0, 0, 5);
    const time = isoTimeOncePerMs(() => now);
    expect(time()).toBe(`,"time":"2026-11-28T09:00:00.005Z"`);
    expect(time()).toBe(',"time":"2026-11-28T09:00:00.005Z"');
    now += 1;
    expect(time()).toBe(',"time":"2026-11-28T09:00:00.006Z"');
  });
});
