import { isIP } from 'node:net';
import { Agent, buildConnector, errors } from 'undici';
import type { SsrfGuard } from './ssrf-guard.js';

export interface GuardedConnectorOptions {
  guard: SsrfGuard;
  /** Bound on the DNS lookup and on each TCP (+TLS) connection attempt. Default 10 s. */
  connectTimeoutMs?: number;
  /** Opens the socket. Only ever called with an address the guard has just checked. Test seam. */
  baseConnector?: buildConnector.connector;
}

export interface GuardedDispatcherOptions extends GuardedConnectorOptions {
  /** Passed through to undici's Agent (keep-alive, pipelining, per-origin connection cap, ...). */
  agentOptions?: Omit<Agent.Options, 'connect' | 'factory'>;
}

/**
 * An undici connector that resolves the host itself, checks every address with the SSRF guard, and then
 * connects to the checked IP. Nothing resolves the name a second time, so DNS rebinding between check
 * and connect has nothing to exploit. TLS keeps the real host name for SNI and certificate checks, and
 * undici builds the Host header from the URL, so the destination sees no difference.
 */
export function createGuardedConnector(options: GuardedConnectorOptions): buildConnector.connector {
  const connectTimeoutMs = options.connectTimeoutMs ?? 10_000;
  const connectToAddress = options.baseConnector ?? buildConnector({ timeout: connectTimeoutMs });

  return (connectOptions, outerCallback) => {
    const host = connectOptions.hostname;
    // undici only notices an aborted request once its connection settles, so a lookup that never
    // answers must be cut off here or the connection attempt would wait forever.
    let settled = false;
    const callback: buildConnector.Callback = (...args) => {
      if (settled) {
        if (args[1]) args[1].destroy();
        return;
      }
      settled = true;
      clearTimeout(lookupTimer);
      outerCallback(...args);
    };
    const lookupTimer = setTimeout(
      () => callback(new errors.ConnectTimeoutError(`DNS lookup of ${host} took longer than ${connectTimeoutMs} ms`), null),
      connectTimeoutMs,
    );

    const servername = connectOptions.servername || (isIP(host) === 0 ? host : undefined);

    // Tries the checked addresses in resolver order; the next one only after the previous one failed.
    const tryAddress = (addresses: readonly string[], index: number, lastError: Error | null): void => {
      const address = addresses[index];
      if (address === undefined) {
        callback(lastError ?? new Error(`could not connect to ${host}`), null);
        return;
      }
      connectToAddress({ ...connectOptions, hostname: address, servername }, (error, socket) => {
        if (error) tryAddress(addresses, index + 1, error);
        else callback(null, socket);
      });
    };

    options.guard.resolveAndCheck(host).then(
      (addresses) => {
        if (settled) return;
        clearTimeout(lookupTimer);
        tryAddress(addresses, 0, null);
      },
      (error: unknown) => callback(error instanceof Error ? error : new Error(String(error)), null),
    );
  };
}

/** An undici Agent whose every connection passes the SSRF guard. Use it as the sender's dispatcher. */
export function createGuardedDispatcher(options: GuardedDispatcherOptions): Agent {
  return new Agent({ ...options.agentOptions, connect: createGuardedConnector(options) });
}
