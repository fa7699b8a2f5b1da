import { describe, expect, it, vi } from 'vitest';
import { DestinationRefusedError } from '../../../src/delivery/destination-refused-error.js';
import { createSsrfGuard, type LookupFunction } from '../../../src/delivery/ssrf-guard.js';

// Only decisions are tested here: nothing in this file opens a socket.
const noLookup: LookupFunction = async (hostname) => {
  throw new Error(`unexpected DNS lookup of ${hostname}`);
};
const guard = createSsrfGuard({ allowNetworks: [], lookup: noLookup });

describe('checkAddress refuses non-public addresses', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['::1', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['fc00::1', 'unique local'],
    ['fd12:3456::1', 'unique local'],
    ['169.254.1.1', 'link-local'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['100.64.0.1', 'carrier-grade NAT'],
    ['100.127.255.254', 'carrier-grade NAT'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['ff02::1', 'multicast'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['::', 'unspecified'],
    ['255.255.255.255', 'broadcast'],
    ['240.0.0.1', 'reserved'],
    ['192.0.2.1', 'reserved'],
    ['198.51.100.7', 'reserved'],
    ['203.0.113.9', 'reserved'],
    ['198.18.0.1', 'reserved'],
    ['2001:db8::1', 'reserved'],
    ['::7f00:1', 'IPv4-compatible'],
    ['4000::1', 'outside IPv6 global unicast'],
    // IPv4-mapped IPv6 is judged as the IPv4 address it reaches.
    ['::ffff:127.0.0.1', '127.0.0.1 is loopback'],
    ['::ffff:7f00:1', '127.0.0.1 is loopback'],
    ['[::ffff:7f00:1]', '127.0.0.1 is loopback'],
    ['::ffff:10.0.0.1', '10.0.0.1 is private'],
    ['::ffff:169.254.169.254', 'metadata'],
    // Translation prefixes are judged by the IPv4 address they embed.
    ['64:ff9b::7f00:1', 'embeds IPv4 127.0.0.1'],
    ['64:ff9b::a9fe:a9fe', 'embeds IPv4 169.254.169.254'],
    ['64:ff9b:1::1', 'local-use NAT64'],
    ['2002:7f00:1::', 'embeds IPv4 127.0.0.1'],
    ['2002:c0a8:101::1', 'embeds IPv4 192.168.1.1'],
    ['2001:0:4136:e378:8000:63bf:f5ff:fffe', 'embeds IPv4 10.0.0.1'], // Teredo client ~0a000001
    ['::ffff:0:7f00:1', 'embeds IPv4 127.0.0.1'],
    // Cloud metadata endpoints.
    ['169.254.169.254', 'metadata'],
    ['fd00:ec2::254', 'metadata'],
    ['100.100.100.200', 'metadata'],
    ['168.63.129.16', 'metadata'],
    // Legacy IPv4 notations normalise to the address they mean.
    ['2130706433', '127.0.0.1 is loopback'],
    ['0177.0.0.1', '127.0.0.1 is loopback'],
    ['0x7f.1', '127.0.0.1 is loopback'],
    ['127.1', '127.0.0.1 is loopback'],
    ['0x7f000001', '127.0.0.1 is loopback'],
    ['017700000001', '127.0.0.1 is loopback'],
    ['0', 'unspecified'],
    // Not addresses at all.
    ['example.com', 'not an IP address'],
    ['', 'not an IP address'],
    ['1.2.3.4.5', 'not an IP address'],
    ['evil.com@127.0.0.1', 'not an IP address'],
  ])('%s → refused (%s)', (ip, reasonPart) => {
    const decision = guard.checkAddress(ip);
    expect(decision.allowed).toBe(false);
    if (!decision.allowed) expect(decision.reason).toContain(reasonPart);
  });
});

describe('checkAddress allows public unicast', () => {
  it.each(['8.8.8.8', '1.1.1.1', '93.184.215.14', '2606:4700:4700::1111', '2a00:1450:4001::200e', '::ffff:8.8.8.8', '64:ff9b::808:808', '2002:808:808::1', '172.32.0.1', '100.128.0.1', '11.0.0.1'])(
    '%s → allowed',
    (ip) => {
      expect(guard.checkAddress(ip)).toEqual({ allowed: true });
    },
  );
});

describe('checkAddress with delivery.allowNetworks', () => {
  const allowing = createSsrfGuard({ allowNetworks: ['127.0.0.1/32', '10.0.0.0/8', 'fd00:1::/64', '::ffff:192.168.5.0/120', '169.254.0.0/16'] });

  it.each([
    ['127.0.0.1', true],
    ['127.0.0.2', false],
    ['::ffff:127.0.0.1', true],
    ['2130706433', true],
    ['64:ff9b::7f00:1', true],
    ['10.9.8.7', true],
    ['fd00:1::5', true],
    ['fd00:2::5', false],
    ['192.168.5.9', true],
    ['192.168.6.9', false],
    ['169.254.1.1', true],
    // A broad entry never opens a metadata endpoint ...
    ['169.254.169.254', false],
    ['::1', false],
  ])('%s → allowed=%s', (ip, allowed) => {
    expect(allowing.checkAddress(ip).allowed).toBe(allowed);
  });

  it('opens a metadata endpoint only when listed by itself', () => {
    const metadata = createSsrfGuard({ allowNetworks: ['169.254.169.254/32', '0.0.0.0/0'] });
    expect(metadata.checkAddress('169.254.169.254')).toEqual({ allowed: true });
    expect(metadata.checkAddress('100.100.100.200').allowed).toBe(false);
    expect(createSsrfGuard({ allowNetworks: ['0.0.0.0/0'] }).checkAddress('169.254.169.254')).toEqual({
      allowed: false,
      reason: '169.254.169.254 is a cloud metadata endpoint; to allow it, list 169.254.169.254/32 itself in HOOKRELAY_ALLOW_NETWORKS (delivery.allowNetworks): a network containing it does not allow it',
    });
    expect(createSsrfGuard({ allowNetworks: [] }).checkAddress('::1')).toEqual({
      allowed: false,
      reason: '::1 is loopback; to allow it, add ::1/128 (or its network) to HOOKRELAY_ALLOW_NETWORKS (delivery.allowNetworks)',
    });
    const bare = createSsrfGuard({ allowNetworks: ['169.254.169.254'] });
    expect(bare.checkAddress('169.254.169.254')).toEqual({ allowed: true });
  });

  it('rejects an invalid CIDR at creation with invalid_config', () => {
    expect(() => createSsrfGuard({ allowNetworks: ['localhost'] })).toThrow(expect.objectContaining({ code: 'invalid_config' }));
    expect(() => createSsrfGuard({ allowNetworks: ['10.0.0.0/33'] })).toThrow(/allowNetworks/);
  });
});

describe('resolveAndCheck', () => {
  it('checks IP literals without DNS, after URL normalisation', async () => {
    const lookup = vi.fn(noLookup);
    const literalGuard = createSsrfGuard({ allowNetworks: [], lookup });
    for (const host of ['127.0.0.1', '2130706433', '0177.0.0.1', '0x7f.1', '[::1]', '::ffff:127.0.0.1', '[::ffff:7f00:1]']) {
      await expect(literalGuard.resolveAndCheck(host)).rejects.toBeInstanceOf(DestinationRefusedError);
    }
    await expect(literalGuard.resolveAndCheck('8.8.8.8')).resolves.toEqual(['8.8.8.8']);
    await expect(literalGuard.resolveAndCheck('[2606:4700:4700::1111]')).resolves.toEqual(['2606:4700:4700::1111']);
    expect(lookup).not.toHaveBeenCalled();
  });

  it('refuses a name when any resolved address is refused', async () => {
    const mixed = createSsrfGuard({
      allowNetworks: [],
      lookup: async () => [{ address: '8.8.8.8', family: 4 }, { address: '10.0.0.1', family: 4 }],
    });
    const error = await mixed.resolveAndCheck('mixed.example').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DestinationRefusedError);
    expect(error).toMatchObject({ code: 'destination_refused', reason: expect.stringContaining('10.0.0.1 is private') });
  });

  it('refuses a name resolving to loopback, allows it once allowlisted', async () => {
    const lookup: LookupFunction = async () => [{ address: '127.0.0.1', family: 4 }];
    await expect(createSsrfGuard({ allowNetworks: [], lookup }).resolveAndCheck('sink.test')).rejects.toThrow(/loopback/);
    await expect(createSsrfGuard({ allowNetworks: ['127.0.0.1/32'], lookup }).resolveAndCheck('sink.test')).resolves.toEqual(['127.0.0.1']);
  });

  it('passes the normalised name to the lookup and returns all checked addresses', async () => {
    const lookup = vi.fn<LookupFunction>(async () => [{ address: '8.8.8.8' }, { address: '2001:4860:4860::8888' }]);
    const named = createSsrfGuard({ allowNetworks: [], lookup });
    await expect(named.resolveAndCheck('Hooks.Example.COM')).resolves.toEqual(['8.8.8.8', '2001:4860:4860::8888']);
    expect(lookup).toHaveBeenCalledWith('hooks.example.com');
  });

  it('refuses strings that are not host names without looking them up', async () => {
    const lookup = vi.fn(noLookup);
    const strict = createSsrfGuard({ allowNetworks: [], lookup });
    for (const host of ['evil.example@127.0.0.1', 'a/b', 'host:80', '', 'a b']) {
      await expect(strict.resolveAndCheck(host)).rejects.toBeInstanceOf(DestinationRefusedError);
    }
    expect(lookup).not.toHaveBeenCalled();
  });

  it('reports an empty answer as a (retryable) DNS failure, not a refusal', async () => {
    const empty = createSsrfGuard({ allowNetworks: [], lookup: async () => [] });
    await expect(empty.resolveAndCheck('nothing.example')).rejects.toMatchObject({ code: 'ENOTFOUND' });
  });
});
