import type { Config } from '../../config.js';
import type { DestinationsReport } from '../delivery-side.js';
import type { RuleSetMessage } from '../../rules/rule-set-message.js';
import type { Outage } from '../../store/outage-store.js';
import type { DeliveryState } from '../../store/outbox-store.js';
import type { ThreadLogEntry } from './thread-log.js';

/** What the receiver gives the delivery thread when it starts it (structured-cloned). */
export interface DeliveryThreadData {
  config: Config;
  /** Values for `${NAME}` references in rule files. */
  env: Record<string, string | undefined>;
  logLevel: string;
  /** The receiver's rules as it starts the thread; each reload follows as a `rules` message. */
  rules: RuleSetMessage;
}

export interface AttemptNote {
  ruleId: string;
  outcome: DeliveryState;
  durationMs: number;
}

/** Receiver → delivery thread. */
export type ToDeliveryThread =
  | { type: 'wake' }
  /** The receiver reloaded its rules: posted before any wake for deliveries planned with them. */
  | { type: 'rules'; rules: RuleSetMessage }
  | { type: 'destinations'; id: number }
  | { type: 'stop'; graceMs: number };

/** Delivery thread → receiver. */
export type FromDeliveryThread =
  | { type: 'ready' }
  /** It could not start; `code` is the HookrelayError code, when it has one (store_unavailable: try again later). */
  | { type: 'failed'; message: string; code?: string }
  /** One call of the thread's logger, for the receiver's logger to write. */
  | { type: 'log'; entry: ThreadLogEntry }
  /** Attempts recorded since the last message (metrics), and how many are in flight now. */
  | { type: 'attempts'; attempts: AttemptNote[]; active: number }
  | { type: 'destinations'; id: number; view: DestinationsReport }
  | { type: 'outage'; change: 'opened' | 'closed'; outage: Outage }
  | { type: 'stopped' };
