import { isIP } from 'node:net';

export type NormalisedHost = { kind: 'ip'; address: string } | { kind: 'name'; name: string };

// Anything that would make the URL parser read part of the string as user info, port, path or query.
const NOT_A_HOST = /[\s/\\@?#%]|^$/;

/**
 * Turns a host as written in a URL into what a connection would really use. Node's `net.connect` skips
 * DNS for IP literals and the resolver accepts legacy forms (`2130706433`, `0177.0.0.1`, `0x7f.1`), so
 * every host goes through the WHATWG URL host parser first: those forms become `127.0.0.1` and are
 * checked as addresses, never passed to DNS. Returns null when the string is not a host at all.
 */
export function normaliseHost(host: string): NormalisedHost | null {
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  if (isIP(bare) !== 0) return { kind: 'ip', address: bare };
  if (NOT_A_HOST.test(bare) || bare.includes(':')) return null;

  let hostname: string;
  try {
    hostname = new URL(`http://${bare}/`).hostname;
  } catch {
    return null;
  }
  const unbracketed = hostname.startsWith('[') ? hostname.slice(1, -1) : hostname;
  if (isIP(unbracketed) !== 0) return { kind: 'ip', address: unbracketed };
  return { kind: 'name', name: hostname };
}
