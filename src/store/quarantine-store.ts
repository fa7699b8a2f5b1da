import type { NewDelivery } from './outbox-store.js';

/** `held`: stored, not routed, until released; `released`: routed once, at its release. */
export type QuarantineState = 'held' | 'released';

/** Which check found the issues: the spec's event schema (zod), or a pinned contract (JSON Schema). */
export type IssueSource = 'schema' | 'contract';

export interface StoredIssue {
  path: string;
  message: string;
  code: string;
}

/**
 * What a check found wrong with an event's body, kept with the event: the spec schema's issues of a body
 * answered 422, or a pinned contract's violations (in `warn` mode the event was routed all the same).
 */
export interface EventIssues {
  from: IssueSource;
  /** The contract file (name within the contracts directory) when `from` is `contract`. */
  contract?: string;
  issues: StoredIssue[];
}

/** Who released a held event and when; `forced`: an operator's decision, not a check that now passes. */
export interface QuarantineRelease {
  releasedAt: number;
  releasedBy: string;
  forced: boolean;
}

/** The quarantine columns of a stored event. */
export interface EventQuarantine {
  /** Null: never held. */
  quarantine: QuarantineState | null;
  issues: EventIssues | null;
  release: QuarantineRelease | null;
}

export type ReleaseOutcome =
  | { released: true; deliveryIds: number[] }
  /** `released`: an earlier release won; `not-held`: the event was never held; `missing`: no such event. */
  | { released: false; reason: 'released' | 'not-held' | 'missing' };

/** Held events: releasing one routes it once (quarantined events are listed with the event filter `quarantine`). */
export interface QuarantineStore {
  /**
   * In one transaction: moves a held event to released (recording who, when, and whether forced), sets the rule
   * set that routed it, and writes its outbox rows (origin `ingest`; an ordered rule's row joins the back of its
   * key). Only the first of concurrent releases does so; every other gets `released: false`.
   */
  releaseEvent(eventId: number, release: QuarantineRelease, routed: { ruleSetHash: string; deliveries: NewDelivery[] }): Promise<ReleaseOutcome>;
  /** How many events are held now, counting at most `limit` (the count walks the index of held events). */
  countHeldEvents(limit: number): Promise<number>;
}
