import type { buildConnector } from 'undici';
import { describe, expect, it } from 'vitest';
import { createGuardedDispatcher } from '../../src/delivery/guarded-dispatcher.js';
import { sendAttempt } from '../../src/delivery/http-sender.js';
import { createSsrfGuard, type LookupFunction } from '../../src/delivery/ssrf-guard.js';
import { sampleTransferSucceeded } from '../../src/samples/transfer-succeeded.js';
import { postSigned, send } from '../helpers/http.js';
import { startTestReceiver, TEST_SECRET, type TestReceiver } from '../helpers/receiver.js';
import { eventually, rulesDirWith } from '../helpers/rules.js';
import { startFaultServer, respond, type FaultServer } from './support/fault-server.js';
import { loopbackSuite } from './support/loopback-suite.js';
import { report } from './support/soak.js';

// SAFETY: no test here may reach an address outside 127.0.0.0/8 and ::1. Decisions are tested with the
// guard's injected `lookup` and a spy connector that never opens a socket; the receiver-level tests run
// under a tripwire that refuses (and records) any connection or DNS lookup that is not loopback. Refused
// loopback spellings all name the port of a loopback server that counts connections, so "refused before
// any socket" is checked for them too.
const { tripwire, running } = loopbackSuite();

const figures = { guardCases: 0, dispatcherCases: 0, ruleCases: 0, resendCases: 0, rebinding: 0, redirects: 0, allowlisted: 0 };

// ---- the matrix ---------------------------------------------------------------------------------------

const BLOCKED_V4: [string, string][] = [
  ['loopback', '127.0.0.1'], ['loopback', '127.255.255.254'],
  ['private', '10.0.0.1'], ['private', '172.16.0.1'], ['private', '172.31.255.255'], ['private', '192.168.1.1'],
  ['link-local', '169.254.1.1'],
  ['cgnat', '100.64.0.1'], ['cgnat', '100.127.255.254'],
  ['multicast', '224.0.0.1'], ['multicast', '239.255.255.250'],
  ['unspecified', '0.0.0.0'], ['unspecified', '0.1.2.3'],
  ['broadcast', '255.255.255.255'], ['reserved', '240.0.0.1'],
  ['documentation', '192.0.2.1'], ['documentation', '198.51.100.7'], ['documentation', '203.0.113.9'], ['benchmarking', '198.18.0.1'],
  ['metadata', '169.254.169.254'], ['metadata', '169.254.170.2'], ['metadata', '169.254.170.23'], ['metadata', '100.100.100.200'],
  ['metadata', '168.63.129.16'], ['metadata', '192.0.0.192'],
];

const BLOCKED_V6: [string, string][] = [
  ['loopback', '::1'], ['loopback', '0:0:0:0:0:0:0:1'], ['loopback', '::0001'],
  ['unspecified', '::'], ['link-local', 'fe80::1'], ['private', 'fc00::1'], ['private', 'fd12:3456::1'],
  ['multicast', 'ff02::1'], ['multicast', 'ff05::1:3'], ['documentation', '2001:db8::1'], ['reserved', '4000::1'],
  ['metadata', 'fd00:ec2::254'], ['metadata', 'fd00:ec2::23'], ['nat64-local', '64:ff9b:1::1'],
];

const octets = (ip: string): number[] => ip.split('.').map(Number);
const toUint = (ip: string): number => octets(ip).reduce((acc, o) => acc * 256 + o, 0);
const hex4 = (n: number): string => n.toString(16);

/** Every spelling of an IPv4 address a URL host (or Node's resolver) reads as that address. */
function ipv4Forms(ip: string): [string, string][] {
  const [a, b, c, d] = octets(ip) as [number, number, number, number];
  const n = toUint(ip);
  const high = (a << 8) | b;
  const low = (c << 8) | d;
  return [
    ['dotted', ip],
    ['decimal', String(n)],
    ['octal', [a, b, c, d].map((o) => `0${o.toString(8)}`).join('.')],
    ['hex', `0x${n.toString(16).padStart(8, '0')}`],
    ['HEX upper', `0X${n.toString(16).toUpperCase()}`],
    ['hex dotted', [a, b, c, d].map((o) => `0x${o.toString(16)}`).join('.')],
    ['two-part', `${a}.${(b << 16) | low}`],
    ['three-part', `${a}.${b}.${low}`],
    ['mixed octal/hex/decimal', `0${a.toString(8)}.0x${b.toString(16)}.${c}.${d}`],
    ['trailing dot', `${ip}.`],
    ['percent-encoded', ip.split('').map((ch) => `%${ch.charCodeAt(0).toString(16)}`).join('')],
    ['fullwidth digits', ip.replace(/[0-9]/g, (digit) => String.fromCharCode(0xff10 + Number(digit))).replace(/\./g, '\uff0e')],
    ['IPv4-mapped', `[::ffff:${ip}]`],
    ['IPv4-mapped hex', `[::ffff:${hex4(high)}:${hex4(low)}]`],
    ['IPv4-mapped long', `[0:0:0:0:0:ffff:${ip}]`],
    ['IPv4-compatible', `[::${ip}]`],
    ['NAT64', `[64:ff9b::${ip}]`],
    ['6to4', `[2002:${hex4(high)}:${hex4(low)}::1]`],
  ];
}

function ipv6Forms(ip: string): [string, string][] {
  return [
    ['bracketed', `[${ip}]`],
    ['upper case', `[${ip.toUpperCase()}]`],
  ];
}

interface MatrixCase {
  label: string;
  range: string;
  address: string;
  host: string;
}

const MATRIX: MatrixCase[] = [
  ...BLOCKED_V4.flatMap(([range, ip]) => ipv4Forms(ip).map(([form, host]) => ({ label: `${range} ${ip} as ${form} (${host})`, range, address: ip, host }))),
  ...BLOCKED_V6.flatMap(([range, ip]) => ipv6Forms(ip).map(([form, host]) => ({ label: `${range} ${ip} as ${form}`, range, address: ip, host }))),
];

/** The host part as a URL parser reads it (what undici hands the connector). */
function urlHostname(host: string, port = 9): string | null {
  try {
    return new URL(`http://${host}:${port}/hook`).hostname;
  } catch {
    return null;
  }
}

// ---- test doubles ---------------------------------------------------------------------------------------

/** A connector that never opens anything: it records the target it was asked for and fails the attempt. */
function spyConnector(): { connector: buildConnector.connector; calls: string[] } {
  const calls: string[] = [];
  const connector: buildConnector.connector = (options, callback) => {
    calls.push(options.hostname);
    callback(Object.assign(new Error(`spy connector: no socket to ${options.hostname}`), { code: 'ESPY' }), null);
  };
  return { connector, calls };
}

const noDns: LookupFunction = async (name) => {
  throw new Error(`unexpected DNS lookup of ${name}`);
};

function spyDispatcher(allowNetworks: string[], lookup: LookupFunction = noDns) {
  const spy = spyConnector();
  const dispatcher = createGuardedDispatcher({ guard: createSsrfGuard({ allowNetworks, lookup }), baseConnector: spy.connector, connectTimeoutMs: 2000 });
  running.push({ close: () => dispatcher.destroy() });
  return { dispatcher, calls: spy.calls };
}

/** A loopback server that answers 200 and counts connections; refused loopback spellings point at its port. */
async function countingServer(): Promise<FaultServer & { connections: () => number }> {
  const server = await startFaultServer((socket) => respond(socket, 200));
  running.push(server);
  return Object.assign(server, { connections: () => server.requests.length });
}

async function receiver(rules: Record<string, string>, allowNetworks: string[], lookup?: LookupFunction): Promise<TestReceiver> {
  // The breaker threshold is out of the way: many spellings share one origin, and refusals are counted as failures.
  const app = await startTestReceiver({ rulesDir: rulesDirWith(rules), delivery: { allowNetworks, pollIntervalMs: 50, failureThreshold: 1000 } }, lookup ? { lookup } : {});
  running.unshift(app);
  return app;
}

// ---- tests -----------------------------------------------------------------------------------------------

describe('SSRF matrix: every blocked class, in every spelling, refused before any socket', () => {
  it(`the guard refuses all ${MATRIX.length} spellings, as a URL parser hands them over, without DNS`, async () => {
    const guard = createSsrfGuard({ allowNetworks: [], lookup: noDns });
    const wrong: string[] = [];
    for (const c of MATRIX) {
      const hostname = urlHostname(c.host);
      if (hostname === null) continue; // not a URL at all: refused as invalid_url before the guard (below)
      const verdict = await guard.resolveAndCheck(hostname).then(() => 'allowed', (err: { code?: string }) => err.code);
      if (verdict !== 'destination_refused') wrong.push(`${c.label}: ${verdict}`);
      figures.guardCases += 1;
    }
    expect(wrong).toEqual([]);
  });

  it('an attempt through the guarded dispatcher is refused before the connector is ever called', async () => {
    const { dispatcher, calls } = spyDispatcher([]);
    const wrong: string[] = [];
    for (const c of MATRIX) {
      const result = await sendAttempt({ url: `http://${c.host}:9/hook`, body: '{}', timeoutMs: 2000, dispatcher });
      if (!['destination_refused', 'invalid_url'].includes(result.error?.code ?? '') || result.status !== undefined) wrong.push(`${c.label}: ${JSON.stringify(result.error)}`);
      figures.dispatcherCases += 1;
    }
    expect(wrong).toEqual([]);
    expect(calls).toEqual([]);
  });

  it('rule destinations: every spelling dead-letters with destination_refused after one attempt, and nothing connects', async () => {
    const target = await countingServer();
    // A representative spelling set per class (the full set runs above): each rule points at the counting
    // server's port, so a refused loopback spelling that still connected would show up there.
    const picked = MATRIX.filter((c, i) => c.range === 'loopback' || c.range === 'metadata' || i % 3 === 0);
    const rules: Record<string, string> = {};
    picked.forEach((c, i) => {
      rules[`r${i}.yaml`] = `id: r${i}\non: [transfer:succeeded]\nto:\n  url: "http://${c.host}:${target.port}/hook"\nretry:\n  schedule: [0s, 100ms]\n`;
    });
    const app = await receiver(rules, []);
    const reply = await postSigned(app.webhookUrl(), sampleTransferSucceeded(), TEST_SECRET);
    expect(reply.status).toBe(200);
    const deliveries = await eventually(async () => {
      const items = (await app.store.listDeliveries({ eventId: reply.json.id }, { limit: 500 })).items;
      return items.length === picked.length && items.every((d) => d.state !== 'pending') ? items : null;
    }, 10_000, 'every refused delivery settled');
    const wrong: string[] = [];
    for (const d of deliveries) {
      const c = picked[Number(d.ruleId.slice(1))]!;
      const detail = (await app.store.getDelivery(d.id))!;
      const ok = detail.state === 'dead' && detail.attemptLog.length === 1 && ['destination_refused', 'invalid_url', 'ERR_INVALID_URL'].includes(detail.attemptLog[0]!.errorCode ?? '');
      if (!ok) wrong.push(`${c.label}: ${detail.state} ${JSON.stringify(detail.attemptLog.map((a) => a.errorCode))}`);
      figures.ruleCases += 1;
    }
    expect(wrong).toEqual([]);
    expect(target.connections()).toBe(0);
    expect(tripwire.violations).toEqual([]);
  });

  it('the admin resend URL: every spelling answers 400 destination_refused (or 422 for a URL that is not one), and nothing connects', async () => {
    const target = await countingServer();
    const app = await receiver({}, []);
    const reply = await postSigned(app.webhookUrl(), sampleTransferSucceeded(), TEST_SECRET);
    const wrong: string[] = [];
    for (const c of MATRIX) {
      const url = `http://${c.host}:${target.port}/hook`;
      const answer = await send(`${app.url}/admin/api/events/${reply.json.id}/resend`, {
        method: 'POST',
        headers: { authorization: `Bearer ${app.adminToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({ url, signing: { mode: 'none' } }),
      });
      const ok = (answer.status === 400 && answer.json?.error?.code === 'destination_refused') || (answer.status === 422 && urlHostname(c.host, target.port) === null);
      if (!ok) wrong.push(`${c.label}: HTTP ${answer.status} ${answer.text.slice(0, 200)}`);
      figures.resendCases += 1;
    }
    expect(wrong).toEqual([]);
    expect(target.connections()).toBe(0);
    expect(tripwire.violations).toEqual([]);
  });
});

describe('SSRF: DNS answers that change, mixed answers, redirects', () => {
  it('rebinding: the address checked is the address connected to; a later answer pointing inside is refused before connecting', async () => {
    let calls = 0;
    // A public answer for the first connection, loopback for the next: the classic rebinding pattern.
    const lookup: LookupFunction = async () => (calls++ === 0 ? [{ address: '93.184.216.34', family: 4 }] : [{ address: '127.0.0.1', family: 4 }]);
    const { dispatcher, calls: connects } = spyDispatcher([], lookup);
    const first = await sendAttempt({ url: 'http://rebind.test:8080/hook', body: '{}', timeoutMs: 2000, dispatcher });
    // The spy was asked for the checked public IP (it opened nothing), never for the name or a second lookup.
    expect(first.error?.code).toBe('ESPY');
    expect(connects).toEqual(['93.184.216.34']);
    expect(calls).toBe(1);
    const second = await sendAttempt({ url: 'http://rebind.test:8080/hook', body: '{}', timeoutMs: 2000, dispatcher });
    expect(second.error).toMatchObject({ code: 'destination_refused', message: expect.stringContaining('127.0.0.1 is loopback') });
    expect(connects).toEqual(['93.184.216.34']);
    // Mixed answers: one inside address refuses the whole name, whatever the order.
    for (const answers of [
      [{ address: '93.184.216.34' }, { address: '10.0.0.1' }],
      [{ address: '::ffff:169.254.169.254' }, { address: '93.184.216.34' }],
      [{ address: '2606:2800:220:1:248:1893:25c8:1946' }, { address: 'fe80::1' }],
    ]) {
      const mixed = spyDispatcher([], async () => answers);
      const result = await sendAttempt({ url: 'http://mixed.test/hook', body: '{}', timeoutMs: 2000, dispatcher: mixed.dispatcher });
      expect(result.error?.code).toBe('destination_refused');
      expect(mixed.calls).toEqual([]);
    }
    expect(tripwire.violations).toEqual([]);
    figures.rebinding += 5;
  });

  it('rebinding through a rule: an allowlisted answer, then one inside a refused range: the retry is refused with no connection', async () => {
    const sink = await startFaultServer((socket) => respond(socket, 503));
    running.push(sink);
    let lookups = 0;
    const lookup: LookupFunction = async () => (lookups++ === 0 ? [{ address: '127.0.0.1', family: 4 }] : [{ address: '10.0.0.1', family: 4 }]);
    const app = await receiver({ 'r.yaml': `id: r\non: [transfer:succeeded]\nto:\n  url: http://rebind.test:${sink.port}/hook\nretry:\n  schedule: [0s, 100ms, 100ms]\n` }, ['127.0.0.1/32'], lookup);
    const reply = await postSigned(app.webhookUrl(), sampleTransferSucceeded(), TEST_SECRET);
    const detail = await eventually(async () => {
      const d = (await app.store.listDeliveries({ eventId: reply.json.id }, { limit: 1 })).items[0];
      return d && d.state !== 'pending' ? app.store.getDelivery(d.id) : null;
    }, 10_000, 'the delivery settled');
    expect(detail!.state).toBe('dead');
    expect(detail!.attemptLog.map((a) => [a.status, a.errorCode])).toEqual([[503, null], [null, 'destination_refused']]);
    expect(sink.requests).toHaveLength(1);
    expect(tripwire.violations).toEqual([]);
    figures.rebinding += 1;
  });

  it('redirects from an allowlisted loopback sink to refused addresses are never followed (rules and resend)', async () => {
    const other = await countingServer();
    const locations = [
      'http://169.254.169.254/latest/meta-data/iam/security-credentials/',
      'http://[::ffff:a9fe:a9fe]/latest/meta-data/',
      'http://10.0.0.1/internal',
      `http://127.0.0.2:${other.port}/loopback-not-allowlisted`,
      `http://[::1]:${other.port}/v6-loopback`,
      `http://2130706434:${other.port}/decimal`,
      `http://localhost:${other.port}/name`,
    ];
    const statuses = [301, 302, 303, 307, 308];
    const cases = locations.flatMap((location) => statuses.map((status) => ({ location, status })));
    const redirector = await startFaultServer((socket, request) => {
      const c = cases[Number(/case=(\d+)/.exec(request.head)?.[1] ?? 0)]!;
      respond(socket, c.status, { location: c.location }, '');
    });
    running.push(redirector);
    const rules: Record<string, string> = {};
    cases.forEach((_c, i) => {
      rules[`r${i}.yaml`] = `id: r${i}\non: [transfer:succeeded]\nto:\n  url: "http://127.0.0.1:${redirector.port}/hook?case=${i}"\n`;
    });
    const app = await receiver(rules, ['127.0.0.1/32'], async (name) => (name === 'localhost' ? [{ address: '127.0.0.2', family: 4 }] : []));
    const reply = await postSigned(app.webhookUrl(), sampleTransferSucceeded(), TEST_SECRET);
    const deliveries = await eventually(async () => {
      const items = (await app.store.listDeliveries({ eventId: reply.json.id }, { limit: 500 })).items;
      return items.length === cases.length && items.every((d) => d.state !== 'pending') ? items : null;
    }, 10_000, 'every redirect delivery settled');
    for (const d of deliveries) {
      const c = cases[Number(d.ruleId.slice(1))]!;
      expect(d.state, `${c.status} to ${c.location}`).toBe('dead');
      expect(d.deadReason).toContain('redirect not followed');
      expect(d.attempts).toBe(1);
    }
    // The admin resend reports the redirect as the answer, without following it.
    for (const [i, c] of cases.entries()) {
      const answer = await send(`${app.url}/admin/api/events/${reply.json.id}/resend`, {
        method: 'POST',
        headers: { authorization: `Bearer ${app.adminToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({ url: `http://127.0.0.1:${redirector.port}/hook?case=${i}`, signing: { mode: 'none' } }),
      });
      expect(answer.status).toBe(200);
      expect(answer.json.status).toBe(c.status);
    }
    expect(redirector.requests).toHaveLength(cases.length * 2);
    expect(other.connections()).toBe(0);
    expect(tripwire.violations).toEqual([]);
    figures.redirects += cases.length * 2;
  });
});

describe('SSRF: allowlisting opens exactly what it names', () => {
  it('an allowlisted network is let through to the connector; a broad allowlist never opens metadata endpoints', async () => {
    const allowed: [string[], string, boolean][] = [
      [['10.0.0.0/8'], '10.1.2.3', true],
      [['10.0.0.0/8'], '11.0.0.1', true], // public anyway
      [['10.0.0.0/8'], '192.168.1.1', false],
      [['192.168.0.0/16'], '0xc0a80101', true],
      [['::ffff:10.0.0.0/104'], '10.9.9.9', true],
      [['fc00::/7'], '[fd12::1]', true],
      [['0.0.0.0/0'], '169.254.169.254', false],
      [['169.254.0.0/16'], '169.254.169.254', false],
      [['169.254.0.0/16'], '169.254.1.1', true],
      [['169.254.169.254/32'], '169.254.169.254', true],
      [['0.0.0.0/0'], '[::ffff:a9fe:a9fe]', false],
      [['::/0'], '[fd00:ec2::254]', false],
      [['fd00:ec2::254/128'], '[fd00:ec2::254]', true],
      [['100.64.0.0/10'], '100.100.100.200', false],
      [['127.0.0.1/32'], '127.0.0.2', false],
    ];
    for (const [networks, host, expected] of allowed) {
      const { dispatcher, calls } = spyDispatcher(networks);
      const result = await sendAttempt({ url: `http://${host}:9/hook`, body: '{}', timeoutMs: 2000, dispatcher });
      // Let through means: the connector is asked for the checked address (the spy opens nothing).
      const letThrough = result.error?.code === 'ESPY';
      expect(letThrough, `${host} with allowNetworks ${networks.join(',')}: ${JSON.stringify(result.error)}`).toBe(expected);
      expect(calls.length).toBe(expected ? 1 : 0);
      figures.allowlisted += 1;
    }
    expect(tripwire.violations).toEqual([]);
  });

  it('with loopback allowlisted (127.0.0.1/32), every spelling of 127.0.0.1 is delivered and other loopback addresses still are not', async () => {
    const target = await countingServer();
    const spellings = ipv4Forms('127.0.0.1').filter(([form]) => !['IPv4-compatible', 'NAT64', '6to4'].includes(form));
    const rules: Record<string, string> = {};
    spellings.forEach(([, host], i) => {
      rules[`ok${i}.yaml`] = `id: ok${i}\non: [transfer:succeeded]\nto:\n  url: "http://${host}:${target.port}/hook"\n`;
    });
    rules['no.yaml'] = `id: no\non: [transfer:succeeded]\nto:\n  url: "http://127.0.0.2:${target.port}/hook"\n`;
    const app = await receiver(rules, ['127.0.0.1/32']);
    const reply = await postSigned(app.webhookUrl(), sampleTransferSucceeded(), TEST_SECRET);
    const deliveries = await eventually(async () => {
      const items = (await app.store.listDeliveries({ eventId: reply.json.id }, { limit: 500 })).items;
      return items.length === spellings.length + 1 && items.every((d) => d.state !== 'pending') ? items : null;
    }, 10_000, 'every delivery settled');
    for (const d of deliveries) {
      const spelling = d.ruleId === 'no' ? '127.0.0.2' : spellings[Number(d.ruleId.slice(2))]![0];
      expect(d.state, spelling).toBe(d.ruleId === 'no' ? 'dead' : 'delivered');
    }
    expect(target.connections()).toBe(spellings.length);
    expect(tripwire.violations).toEqual([]);
    figures.allowlisted += spellings.length + 1;
    const total = figures.guardCases + figures.dispatcherCases + figures.ruleCases + figures.resendCases + figures.rebinding + figures.redirects + figures.allowlisted;
    report('ssrf-matrix', { cases: total, passed: total, ...figures, socketsToRefusedAddresses: 0, tripwireViolations: tripwire.violations.length });
  });
});
