import { promises as dns } from 'node:dns';
import ipaddr from 'ipaddr.js';
import { HookrelayError } from '../errors.js';
import { canonicalAddress, embeddedIpv4, isMetadataAddress, nonPublicCategory, type IpAddress } from './address-ranges.js';
import { DestinationRefusedError } from './destination-refused-error.js';
import { normaliseHost } from './host-normalisation.js';

export type AddressDecision = { allowed: true } | { allowed: false; reason: string };

export interface ResolvedAddress {
  address: string;
  family?: number;
}

/** Resolves a host name to all its addresses. Injectable so tests never touch real DNS. */
export type LookupFunction = (hostname: string) => Promise<readonly ResolvedAddress[]>;

export interface SsrfGuardOptions {
  /** CIDRs (`delivery.allowNetworks`) that may be reached even though they are not public, e.g. `127.0.0.1/32`. */
  allowNetworks: readonly string[];
  lookup?: LookupFunction;
}

export interface SsrfGuard {
  /** The verdict for one IP address (any notation Node or a URL accepts). */
  checkAddress(ip: string): AddressDecision;
  /**
   * Resolves `hostname` (IP literals are normalised, never looked up) and checks every address. Resolves
   * to the checked addresses; rejects with `DestinationRefusedError` when any address is refused.
   */
  resolveAndCheck(hostname: string): Promise<string[]>;
}

const defaultLookup: LookupFunction = (hostname) => dns.lookup(hostname, { all: true });

type Network = [IpAddress, number];

function parseAllowNetwork(cidr: string): Network {
  const text = cidr.includes('/') ? cidr : `${cidr}/${cidr.includes(':') ? 128 : 32}`;
  let network: Network;
  try {
    network = ipaddr.parseCIDR(text);
  } catch {
    throw new HookrelayError('invalid_config', `delivery.allowNetworks: "${cidr}" is not a CIDR such as 127.0.0.1/32 or ::1/128`);
  }
  // ::ffff:a.b.c.d/N is the IPv4 network a.b.c.d/(N-96): addresses are compared in canonical form.
  const [address, prefix] = network;
  if (address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress() && prefix >= 96) {
    return [(address as ipaddr.IPv6).toIPv4Address(), prefix - 96];
  }
  return network;
}

/** Where a refusal tells the operator to allow an address. */
const ALLOW_SETTING = 'HOOKRELAY_ALLOW_NETWORKS (delivery.allowNetworks)';

/** The allowlist entry for exactly this address. */
function hostCidr(address: IpAddress): string {
  return `${address.toString()}/${address.kind() === 'ipv4' ? 32 : 128}`;
}

function parseIp(ip: string): IpAddress | null {
  const host = normaliseHost(ip);
  if (host?.kind !== 'ip') return null;
  try {
    return ipaddr.parse(host.address);
  } catch {
    return null;
  }
}

export function createSsrfGuard(options: SsrfGuardOptions): SsrfGuard {
  const allowNetworks = options.allowNetworks.map(parseAllowNetwork);
  const lookup = options.lookup ?? defaultLookup;

  function isAllowlisted(address: IpAddress, hostEntryOnly: boolean): boolean {
    const bits = address.kind() === 'ipv4' ? 32 : 128;
    return allowNetworks.some(
      ([network, prefix]) => network.kind() === address.kind() && (!hostEntryOnly || prefix === bits) && address.match(network, prefix),
    );
  }

  function decide(parsed: IpAddress): AddressDecision {
    const address = canonicalAddress(parsed);
    const shown = address.toString();
    if (isMetadataAddress(address)) {
      return isAllowlisted(address, true)
        ? { allowed: true }
        : { allowed: false, reason: `${shown} is a cloud metadata endpoint; to allow it, list ${hostCidr(address)} itself in ${ALLOW_SETTING}: a network containing it does not allow it` };
    }
    if (isAllowlisted(address, false)) return { allowed: true };

    const embedded = embeddedIpv4(address);
    if (embedded === 'refuse') return { allowed: false, reason: `${shown} is in a local-use NAT64 prefix` };
    if (embedded) {
      for (const inner of embedded) {
        const verdict = decide(inner);
        if (!verdict.allowed) return { allowed: false, reason: `${shown} embeds IPv4 ${inner.toString()}: ${verdict.reason}` };
      }
      return { allowed: true };
    }

    const category = nonPublicCategory(address);
    if (category) return { allowed: false, reason: `${shown} is ${category}; to allow it, add ${hostCidr(address)} (or its network) to ${ALLOW_SETTING}` };
    return { allowed: true };
  }

  function checkAddress(ip: string): AddressDecision {
    const parsed = parseIp(ip);
    return parsed ? decide(parsed) : { allowed: false, reason: `"${ip}" is not an IP address` };
  }

  async function resolveAndCheck(hostname: string): Promise<string[]> {
    const host = normaliseHost(hostname);
    if (!host) throw new DestinationRefusedError(hostname, 'not a valid host name');

    const addresses = host.kind === 'ip' ? [host.address] : (await lookup(host.name)).map((entry) => entry.address);
    if (addresses.length === 0) {
      throw Object.assign(new Error(`no addresses found for ${hostname}`), { code: 'ENOTFOUND' });
    }
    // One refused address refuses the host: mixing a public and a private record must not work.
    for (const address of addresses) {
      const verdict = checkAddress(address);
      if (!verdict.allowed) throw new DestinationRefusedError(hostname, verdict.reason, address);
    }
    return addresses;
  }

  return { checkAddress, resolveAndCheck };
}
