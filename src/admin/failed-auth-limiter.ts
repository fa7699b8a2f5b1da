import type { Request, Response } from 'express';
import ipaddr from 'ipaddr.js';
import { HookrelayError } from '../errors.js';

/** Client addresses remembered at most: the one that failed least recently is forgotten first. */
export const MAX_TRACKED_CLIENTS = 10_000;

export interface FailedAuthLimits {
  /** Failures a client address may make within the window. */
  max: number;
  windowMs: number;
}

/**
 * The key a client address is counted under. IPv6 clients are counted per /64, the block one subscriber
 * usually holds, so rotating through its addresses earns no more attempts; IPv4-mapped IPv6 counts as IPv4.
 */
export function clientKey(address: string | undefined): string {
  if (!address || !ipaddr.isValid(address)) return address ?? 'unknown';
  const parsed = ipaddr.process(address);
  if (parsed.kind() === 'ipv4') return parsed.toString();
  return `${(parsed as ipaddr.IPv6).parts.slice(0, 4).map((part) => part.toString(16)).join(':')}::/64`;
}

/**
 * Failed authentications (wrong admin or metrics tokens) per client address, in a sliding window, on this
 * node. Only failures are recorded; a client over the limit is refused before its token is checked, since
 * checking it would tell a right guess from a wrong one. The table keeps at most `maxClients` addresses,
 * least recently failed first out, so a flood of addresses costs bounded memory.
 */
export class FailedAuthLimiter {
  /** Per client key, the times of its recent failures, oldest first (at most `max`). Map order is recency. */
  private readonly failures = new Map<string, number[]>();

  constructor(
    private readonly limits: FailedAuthLimits,
    private readonly now: () => number = Date.now,
    private readonly maxClients = MAX_TRACKED_CLIENTS,
  ) {}

  /** Seconds until this client may try again, or 0 when it may try now. */
  retryAfterSeconds(key: string): number {
    const times = this.failures.get(key);
    if (!times || times.length < this.limits.max) return 0;
    const waitMs = times[0]! + this.limits.windowMs - this.now();
    return waitMs > 0 ? Math.ceil(waitMs / 1000) : 0;
  }

  recordFailure(key: string): void {
    const now = this.now();
    const times = (this.failures.get(key) ?? []).filter((t) => t > now - this.limits.windowMs);
    times.push(now);
    if (times.length > this.limits.max) times.shift();
    this.failures.delete(key);
    this.failures.set(key, times);
    if (this.failures.size > this.maxClients) this.failures.delete(this.failures.keys().next().value!);
  }

  /** Addresses remembered now (bounded by `maxClients`). */
  get trackedClients(): number {
    return this.failures.size;
  }

  /**
   * For an express route about to check a token: throws 429 `too_many_attempts` (with `Retry-After`) when
   * the client is over the limit. The key is `req.ip`: the connection's address, or the client a trusted
   * proxy names (`server.trustProxy`).
   */
  refuseIfLimited(req: Request, res: Response): void {
    const retryAfter = this.retryAfterSeconds(clientKey(req.ip));
    if (retryAfter === 0) return;
    res.set('Retry-After', String(retryAfter));
    throw new HookrelayError('too_many_attempts', 'Too many failed authentications from this address; retry later.', { retryAfterSeconds: retryAfter });
  }

  /** For an express route whose token check failed. */
  recordFailed(req: Request): void {
    this.recordFailure(clientKey(req.ip));
  }
}
