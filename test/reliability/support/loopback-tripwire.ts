import dns from 'node:dns';
import net from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * A safety net for the process running a suite: every outgoing TCP connection and every DNS lookup is
 * checked before it happens. Loopback (127.0.0.0/8, ::1, localhost) and unix sockets pass; anything else
 * is recorded in `violations` and failed before a packet leaves, so a broken SSRF guard makes a test fail
 * instead of reaching the network.
 */
export interface LoopbackTripwire {
  /** Every refused target, `host:port` or `dns:name`. Assert it stays empty. */
  violations: string[];
  /** Every connection that was let through, `host:port`. */
  connections: string[];
  uninstall(): void;
}

/** 127.0.0.0/8, ::1 and the IPv4-mapped forms of 127.0.0.0/8, in any notation; or the name localhost. */
function isLoopback(host: string): boolean {
  if (host.toLowerCase() === 'localhost') return true;
  if (!ipaddr.isValid(host)) return false;
  let address = ipaddr.parse(host);
  if (address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress()) address = (address as ipaddr.IPv6).toIPv4Address();
  return address.range() === 'loopback';
}

function targetOf(args: unknown[]): { host?: string; port?: unknown; path?: unknown } {
  let first = args[0];
  // net.connect() hands Socket#connect its already-normalised [options, callback] array.
  if (Array.isArray(first)) first = first[0];
  if (typeof first === 'number' || (typeof first === 'string' && /^\d+$/.test(first))) {
    return { port: first, host: typeof args[1] === 'string' ? args[1] : 'localhost' };
  }
  if (typeof first === 'string') return { path: first };
  const options = (first ?? {}) as { host?: string; port?: unknown; path?: unknown };
  if (options.path !== undefined) return { path: options.path };
  return { host: options.host ?? 'localhost', port: options.port };
}

export function installLoopbackTripwire(): LoopbackTripwire {
  const violations: string[] = [];
  const connections: string[] = [];
  const originalConnect = net.Socket.prototype.connect;
  const originalLookup = dns.lookup;
  const originalPromiseLookup = dns.promises.lookup;

  net.Socket.prototype.connect = function guardedConnect(this: net.Socket, ...args: unknown[]) {
    const target = targetOf(args);
    if (target.path !== undefined) return (originalConnect as (...a: unknown[]) => net.Socket).apply(this, args);
    const host = String(target.host).replace(/^\[|\]$/g, '');
    if (!isLoopback(host)) {
      violations.push(`${host}:${String(target.port)}`);
      process.nextTick(() => this.destroy(Object.assign(new Error(`test tripwire: refused connection to ${host}`), { code: 'ETRIPWIRE' })));
      return this;
    }
    connections.push(`${host}:${String(target.port)}`);
    return (originalConnect as (...a: unknown[]) => net.Socket).apply(this, args);
  } as typeof net.Socket.prototype.connect;

  const refusedLookup = (name: string): Error => {
    violations.push(`dns:${name}`);
    return Object.assign(new Error(`test tripwire: refused DNS lookup of ${name}`), { code: 'ENOTFOUND' });
  };
  dns.lookup = function guardedLookup(name: string, ...rest: unknown[]) {
    if (isLoopback(name)) return (originalLookup as (...a: unknown[]) => void)(name, ...rest);
    const callback = rest.at(-1) as (err: Error) => void;
    process.nextTick(() => callback(refusedLookup(name)));
    return undefined;
  } as typeof dns.lookup;
  dns.promises.lookup = (async (name: string, ...rest: unknown[]) => {
    if (isLoopback(name)) return (originalPromiseLookup as (...a: unknown[]) => Promise<unknown>)(name, ...rest);
    throw refusedLookup(name);
  }) as typeof dns.promises.lookup;

  return {
    violations,
    connections,
    uninstall() {
      net.Socket.prototype.connect = originalConnect;
      dns.lookup = originalLookup;
      dns.promises.lookup = originalPromiseLookup;
    },
  };
}
