import type { CheckDestination, DestinationVerdict } from '../rules/explain.js';
import { DestinationRefusedError } from './destination-refused-error.js';
import { normaliseHost } from './host-normalisation.js';
import type { SsrfGuard } from './ssrf-guard.js';

/** A name that does not resolve within this long is reported unchecked rather than holding the answer up. */
const LOOKUP_TIMEOUT_MS = 3_000;

export interface DestinationCheckOptions {
  /**
   * Resolve host names with the guard's lookup (what the worker would do). Off: only IP literals are
   * judged and a name is reported as not checked, for a tool that must not query DNS.
   */
  resolveNames: boolean;
  lookupTimeoutMs?: number;
}

/** The SSRF guard's decision on a URL, the way the delivery loop would meet it; never connects. */
export function destinationCheck(guard: SsrfGuard, options: DestinationCheckOptions): CheckDestination {
  return async (url) => {
    let hostname: string;
    try {
      hostname = new URL(url).hostname;
    } catch {
      return { checked: false, reason: 'the URL does not parse (an unset ${ENV} reference?)' };
    }
    const host = normaliseHost(hostname);
    if (host?.kind !== 'ip' && !options.resolveNames) return { checked: false, reason: `${hostname} is a host name and names are not resolved here` };
    return verdictOf(guard.resolveAndCheck(hostname), options.lookupTimeoutMs ?? LOOKUP_TIMEOUT_MS, hostname);
  };
}

async function verdictOf(check: Promise<string[]>, timeoutMs: number, hostname: string): Promise<DestinationVerdict> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<DestinationVerdict>((resolve) => {
    timer = setTimeout(() => resolve({ checked: false, reason: `looking up ${hostname} took longer than ${timeoutMs} ms` }), timeoutMs);
  });
  try {
    return await Promise.race([
      check.then((addresses): DestinationVerdict => ({ checked: true, allowed: true, addresses })),
      timeout,
    ]);
  } catch (err) {
    if (err instanceof DestinationRefusedError) return { checked: true, allowed: false, reason: err.reason };
    return { checked: false, reason: `cannot resolve ${hostname}: ${(err as Error).message}` };
  } finally {
    clearTimeout(timer);
  }
}
