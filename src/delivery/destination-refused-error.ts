import { HookrelayError } from '../errors.js';

/**
 * The SSRF guard refused a destination. Permanent: retrying cannot change the verdict (the address is
 * refused by policy), so the attempt dead-letters at once.
 */
export class DestinationRefusedError extends HookrelayError {
  readonly reason: string;

  constructor(host: string, reason: string, address?: string) {
    super('destination_refused', `destination ${host} refused: ${reason}`, { host, address: address ?? null, reason });
    this.name = 'DestinationRefusedError';
    this.reason = reason;
  }
}
