import { Option, type Command } from 'commander';
import { parseDuration } from '../duration.js';
import { HookrelayError } from '../errors.js';
import type { Validation } from '../store/event-store.js';
import type { DeliveryState } from '../store/outbox-store.js';
import type { QuarantineState } from '../store/quarantine-store.js';
import type { EventQuery } from './admin-target.js';

export interface EventFilterFlags {
  event?: string;
  source?: string;
  checkoutId?: string;
  email?: string;
  wallet?: string;
  transferId?: string;
  validation?: Validation;
  deliveryState?: DeliveryState;
  quarantine?: QuarantineState;
  from?: string;
  to?: string;
}

/** The filter options shared by `events list|export|replay` and `deliveries retry`. */
export function addEventFilterOptions(command: Command): Command {
  return command
    .option('--event <name>', 'event name, e.g. transfer:succeeded')
    .option('--source <name>', 'source the event arrived on')
    .option('--checkout-id <id>', 'result.checkoutId')
    .option('--email <email>', 'result.email (case-insensitive)')
    .option('--wallet <address>', 'result.walletAddress (case-insensitive)')
    .option('--transfer-id <id>', 'result.id (the transfer id)')
    .addOption(new Option('--validation <v>', 'schema check result').choices(['valid', 'unrecognised']))
    .addOption(new Option('--delivery-state <state>', 'has a delivery in this state').choices(['pending', 'delivered', 'dead']))
    .addOption(new Option('--quarantine <state>', 'held in quarantine (stored, not routed), or released from it').choices(['held', 'released']))
    .option('--from <time>', 'received at or after: ISO time, unix ms, or an age such as 7d or 12h')
    .option('--to <time>', 'received before: ISO time, unix ms, or an age such as 1h');
}

/** "2024-05-01", "2024-05-01T10:00:00Z", "1714557600000" or an age ("7d" = seven days ago) → unix ms. */
export function parseTime(value: string, flag: string, now = Date.now()): number {
  const text = value.trim();
  if (/^\d{10,}$/.test(text)) return Number(text);
  if (/^\d+(\.\d+)?\s*[a-z]+$/i.test(text)) {
    try {
      return now - parseDuration(text);
    } catch {
      // not an age: try it as a date below
    }
  }
  const parsed = Date.parse(text);
  if (Number.isNaN(parsed)) throw new HookrelayError('bad_request', `${flag} "${value}" is not a time (use an ISO time, unix ms, or an age such as 7d).`);
  return parsed;
}

export function eventQueryOf(flags: EventFilterFlags): EventQuery {
  const query: EventQuery = {
    event: flags.event,
    source: flags.source,
    checkoutId: flags.checkoutId,
    email: flags.email,
    walletAddress: flags.wallet,
    transferId: flags.transferId,
    validation: flags.validation,
    deliveryState: flags.deliveryState,
    quarantine: flags.quarantine,
    receivedFrom: flags.from === undefined ? undefined : parseTime(flags.from, '--from'),
    receivedTo: flags.to === undefined ? undefined : parseTime(flags.to, '--to'),
  };
  return Object.fromEntries(Object.entries(query).filter(([, v]) => v !== undefined)) as EventQuery;
}

export function positiveInt(value: string, flag: string, max = Number.MAX_SAFE_INTEGER): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > max) throw new HookrelayError('bad_request', `${flag} must be a whole number from 1 to ${max}, got "${value}".`);
  return n;
}
