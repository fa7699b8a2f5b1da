import { hostname, networkInterfaces } from 'node:os';
import ipaddr from 'ipaddr.js';

/**
 * True when `url` names this machine: localhost, a loopback or unspecified address, one of this machine's
 * interface addresses, or its host name. Only then may a command take secrets from the local data dir.
 */
export function isThisMachine(url: string): boolean {
  let host: string;
  try {
    host = new URL(url).hostname.replace(/^\[|\]$/g, '').toLowerCase();
  } catch {
    return false;
  }
  if (host === 'localhost' || host.endsWith('.localhost') || host === hostname().toLowerCase()) return true;
  if (!ipaddr.isValid(host)) return false;
  const address = ipaddr.process(host);
  if (address.range() === 'loopback' || address.range() === 'unspecified') return true;
  const own = Object.values(networkInterfaces()).flatMap((entries) => entries ?? []);
  return own.some((entry) => ipaddr.isValid(entry.address) && ipaddr.process(entry.address).toString() === address.toString());
}
