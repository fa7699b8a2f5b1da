import ipaddr from 'ipaddr.js';

export type IpAddress = ipaddr.IPv4 | ipaddr.IPv6;

/**
 * Instance-metadata endpoints of the big clouds. They hand out credentials, so they are refused even
 * when a broad allowlist entry (say 169.254.0.0/16 or 0.0.0.0/0) covers them; only an entry naming the
 * single address (/32 or /128) opens one. Most already sit in refused ranges; 168.63.129.16 does not.
 */
const METADATA_ADDRESSES: readonly IpAddress[] = [
  '169.254.169.254', // AWS, GCP, Azure, OCI, DigitalOcean, ...
  '169.254.170.2', // AWS ECS task metadata
  '169.254.170.23', // AWS EKS pod identity
  '100.100.100.200', // Alibaba Cloud
  '168.63.129.16', // Azure wire server
  '192.0.0.192', // Oracle Cloud (classic)
  'fd00:ec2::254', // AWS IMDS over IPv6
  'fd00:ec2::23', // AWS EKS pod identity over IPv6
].map((address) => ipaddr.parse(address));

export function isMetadataAddress(address: IpAddress): boolean {
  return METADATA_ADDRESSES.some((metadata) => metadata.kind() === address.kind() && metadata.toString() === address.toString());
}

const RANGE_LABELS: Record<string, string> = {
  unspecified: 'unspecified',
  broadcast: 'broadcast',
  multicast: 'multicast',
  linkLocal: 'link-local',
  loopback: 'loopback',
  carrierGradeNat: 'carrier-grade NAT (shared address space)',
  private: 'private (RFC 1918)',
  uniqueLocal: 'unique local (private IPv6)',
  reserved: 'reserved',
};

/** IPv4-mapped IPv6 (`::ffff:127.0.0.1`, `::ffff:7f00:1`) reaches the IPv4 host, so it is judged as one. */
export function canonicalAddress(address: IpAddress): IpAddress {
  if (address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress()) {
    return (address as ipaddr.IPv6).toIPv4Address();
  }
  return address;
}

/**
 * Why `address` (already canonical) is not public unicast, or null when it is. Translation prefixes
 * (NAT64, 6to4, Teredo, SIIT) are not judged here: see `embeddedIpv4`.
 */
export function nonPublicCategory(address: IpAddress): string | null {
  if (address.kind() === 'ipv4') {
    const range = (address as ipaddr.IPv4).range();
    return range === 'unicast' ? null : (RANGE_LABELS[range] ?? range);
  }
  const v6 = address as ipaddr.IPv6;
  const range = v6.range();
  if (range !== 'unicast') return RANGE_LABELS[range] ?? range;
  // ::a.b.c.d (deprecated IPv4-compatible) and everything outside 2000::/3 is not routable global unicast.
  if (v6.parts.slice(0, 6).every((part) => part === 0)) return 'IPv4-compatible IPv6 (deprecated)';
  if (v6.parts[0]! < 0x2000 || v6.parts[0]! > 0x3fff) return 'outside IPv6 global unicast (2000::/3)';
  return null;
}

function ipv4FromParts(high: number, low: number): ipaddr.IPv4 {
  return new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);
}

/**
 * For IPv6 translation prefixes, the IPv4 addresses the traffic ends up at; `'refuse'` for prefixes whose
 * target cannot be known (local-use NAT64); null for ordinary addresses.
 */
export function embeddedIpv4(address: IpAddress): ipaddr.IPv4[] | 'refuse' | null {
  if (address.kind() !== 'ipv6') return null;
  const v6 = address as ipaddr.IPv6;
  const p = v6.parts;
  switch (v6.range()) {
    case 'rfc6052': // NAT64: 64:ff9b::/96 embeds the target; 64:ff9b:1::/48 is a site-defined local use.
      return p.slice(2, 6).every((part) => part === 0) ? [ipv4FromParts(p[6]!, p[7]!)] : 'refuse';
    case 'rfc6145': // SIIT ::ffff:0:a.b.c.d
      return [ipv4FromParts(p[6]!, p[7]!)];
    case '6to4': // 2002:AABB:CCDD::/48
      return [ipv4FromParts(p[1]!, p[2]!)];
    case 'teredo': // 2001:0:SERVER:flags:port:~CLIENT
      return [ipv4FromParts(p[2]!, p[3]!), ipv4FromParts(p[6]! ^ 0xffff, p[7]! ^ 0xffff)];
    default:
      return null;
  }
}
