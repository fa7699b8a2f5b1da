import type { buildConnector } from 'undici';
import { describe, expect, it, vi } from 'vitest';
import { classifyAttempt } from '../../../src/delivery/classify-attempt.js';
import { sendAttempt } from '../../../src/delivery/http-sender.js';
import { createSsrfGuard, type LookupFunction } from '../../../src/delivery/ssrf-guard.js';
import { closedAfterEach } from './closed-after-each.js';
import { loopbackOnlyConnector, type LoopbackSink } from './loopback-sink.js';

// Every target in this file is loopback, and connections go through `loopbackOnlyConnector`, which
// records the address it is asked for and opens nothing outside 127.0.0.0/8 and ::1.
const { sink, guardedDispatcher } = closedAfterEach();

const okSink = (): Promise<LoopbackSink> => sink((req, res) => res.writeHead(200).end(`host=${req.headers.host}`));

function guardedAgent(allowNetworks: string[], lookup?: LookupFunction) {
  const guard = lookup ? createSsrfGuard({ allowNetworks, lookup }) : createSsrfGuard({ allowNetworks });
  const spy = loopbackOnlyConnector();
  const agent = guardedDispatcher({ guard, baseConnector: spy.connector });
  return { agent, targets: spy.targets };
}

const send = (url: string, dispatcher: ReturnType<typeof guardedAgent>['agent']) =>
  sendAttempt({ url, body: '{}', timeoutMs: 2000, dispatcher });

describe('guarded dispatcher: literal addresses', () => {
  it('refuses 127.0.0.1 when not allowlisted, before any socket is opened', async () => {
    const sink = await okSink();
    const { agent, targets } = guardedAgent([]);
    const result = await send(`${sink.origin}/hook`, agent);
    expect(result.error).toMatchObject({ code: 'destination_refused', message: expect.stringContaining('127.0.0.1 is loopback') });
    expect(result.status).toBeUndefined();
    expect(targets).toEqual([]);
    expect(sink.connections).toBe(0);
    expect(classifyAttempt({ ...result, now: Date.now() })).toMatchObject({ verdict: 'permanent' });
  });

  it.each(['2130706433', '0177.0.0.1', '0x7f.1', '127.1', '[::ffff:127.0.0.1]', '[::ffff:7f00:1]'])(
    'refuses the loopback spelling %s too',
    async (host) => {
      const sink = await okSink();
      const { agent, targets } = guardedAgent([]);
      const result = await send(`http://${host}:${sink.port}/hook`, agent);
      expect(result.error?.code).toBe('destination_refused');
      expect(targets).toEqual([]);
      expect(sink.connections).toBe(0);
    },
  );

  it('refuses [::1] when not allowlisted', async () => {
    const { agent, targets } = guardedAgent([]);
    const result = await send('http://[::1]:9/hook', agent);
    expect(result.error?.code).toBe('destination_refused');
    expect(targets).toEqual([]);
  });

  it('delivers to 127.0.0.1 when allowlisted, by any spelling', async () => {
    const sink = await okSink();
    const { agent, targets } = guardedAgent(['127.0.0.1/32']);
    for (const host of ['127.0.0.1', '2130706433', '0x7f.1']) {
      const result = await send(`http://${host}:${sink.port}/hook`, agent);
      expect(result).toMatchObject({ status: 200, responseExcerpt: `host=127.0.0.1:${sink.port}` });
    }
    expect(targets.every((target) => target === '127.0.0.1')).toBe(true);
  });

  it('delivers through the default connector when allowlisted', async () => {
    const sink = await okSink();
    const agent = guardedDispatcher({ guard: createSsrfGuard({ allowNetworks: ['127.0.0.1/32'] }), connectTimeoutMs: 2000 });
    const result = await send(`${sink.origin}/hook`, agent);
    expect(result.status).toBe(200);
    expect(sink.connections).toBe(1);
  });
});

describe('guarded dispatcher: host names (injected DNS)', () => {
  it('refuses a name that resolves to loopback when not allowlisted', async () => {
    const sink = await okSink();
    const lookup = vi.fn<LookupFunction>(async () => [{ address: '127.0.0.1', family: 4 }]);
    const { agent, targets } = guardedAgent([], lookup);
    const result = await send(`http://sink.test:${sink.port}/hook`, agent);
    expect(result.error).toMatchObject({ code: 'destination_refused', message: expect.stringContaining('sink.test') });
    expect(lookup).toHaveBeenCalledWith('sink.test');
    expect(targets).toEqual([]);
    expect(sink.connections).toBe(0);
  });

  it('connects to the checked address when allowlisted, keeping the Host header', async () => {
    const sink = await okSink();
    const { agent, targets } = guardedAgent(['127.0.0.1/32'], async () => [{ address: '127.0.0.1', family: 4 }]);
    const result = await send(`http://sink.test:${sink.port}/hook`, agent);
    expect(result).toMatchObject({ status: 200, responseExcerpt: `host=sink.test:${sink.port}` });
    expect(targets).toEqual(['127.0.0.1']);
  });

  it('refuses a name when one of its addresses is refused (no partial trust)', async () => {
    const sink = await okSink();
    const { agent, targets } = guardedAgent(['127.0.0.1/32'], async () => [
      { address: '127.0.0.1', family: 4 },
      { address: '127.0.0.2', family: 4 },
    ]);
    const result = await send(`http://mixed.test:${sink.port}/hook`, agent);
    expect(result.error?.message).toContain('127.0.0.2 is loopback');
    expect(targets).toEqual([]);
    expect(sink.connections).toBe(0);
  });

  it('tries the next checked address when one does not accept', async () => {
    const sink = await okSink();
    // The sink listens on 127.0.0.1 only, so 127.0.0.2 refuses the connection.
    const { agent, targets } = guardedAgent(['127.0.0.0/8'], async () => [
      { address: '127.0.0.2', family: 4 },
      { address: '127.0.0.1', family: 4 },
    ]);
    const result = await send(`http://two.test:${sink.port}/hook`, agent);
    expect(result.status).toBe(200);
    expect(targets).toEqual(['127.0.0.2', '127.0.0.1']);
  });

  it('DNS rebinding: the socket goes to the address that was checked, not a fresh answer', async () => {
    const sink = await okSink();
    // First answer allowlisted, every later answer refused: a connector that resolved again would
    // end up at 127.0.0.2 (where nothing listens) or be refused.
    const answers = ['127.0.0.1', '127.0.0.2'];
    const lookup = vi.fn<LookupFunction>(async () => [{ address: answers.shift() ?? '127.0.0.2', family: 4 }]);
    const { agent, targets } = guardedAgent(['127.0.0.1/32'], lookup);
    const result = await send(`http://rebind.test:${sink.port}/hook`, agent);
    expect(result.status).toBe(200);
    expect(lookup).toHaveBeenCalledTimes(1);
    expect(targets).toEqual(['127.0.0.1']);
    expect(sink.connections).toBe(1);
  });

  it('DNS rebinding: public first, loopback after, the connect target is the checked public address', async () => {
    // Nothing is opened here: the spy records the target and fails the connection.
    const answers = ['8.8.8.8', '127.0.0.1'];
    const lookup = vi.fn<LookupFunction>(async () => [{ address: answers.shift() ?? '127.0.0.1', family: 4 }]);
    const calls: buildConnector.Options[] = [];
    const spy: buildConnector.connector = (options, callback) => {
      calls.push(options);
      callback(new Error('spy: no socket opened'), null);
    };
    const agent = guardedDispatcher({ guard: createSsrfGuard({ allowNetworks: [], lookup }), baseConnector: spy });
    const result = await send('https://rebind.example/hook', agent);
    expect(result.error?.message).toContain('spy: no socket opened');
    expect(lookup).toHaveBeenCalledTimes(1);
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({ hostname: '8.8.8.8', servername: 'rebind.example', protocol: 'https:' });
  });

  it('a lookup that never answers fails the connection after connectTimeoutMs, opening nothing', async () => {
    const spy = loopbackOnlyConnector();
    const agent = guardedDispatcher({
      guard: createSsrfGuard({ allowNetworks: ['127.0.0.1/32'], lookup: () => new Promise(() => {}) }),
      baseConnector: spy.connector,
      connectTimeoutMs: 150,
    });
    const result = await sendAttempt({ url: 'http://slow-dns.test/hook', body: '{}', timeoutMs: 5000, dispatcher: agent });
    expect(result.error?.code).toBe('UND_ERR_CONNECT_TIMEOUT');
    expect(result.durationMs).toBeLessThan(2000);
    expect(spy.targets).toEqual([]);
  });
});
