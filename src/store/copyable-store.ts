import type { SeenKeyRecord } from './seen-keys-store.js';
import type { StoredEvent } from './event-store.js';
import type { Job } from './job-store.js';
import type { DeliveryRedrive, Outage } from './outage-store.js';
import type { Delivery, StoredAttempt } from './outbox-store.js';
import type { KeptRuleSet } from './rule-set-store.js';

/**
 * Copying a whole store to another (`hookrelay store copy`, src/store/copy-store.ts): rows keep their ids.
 */
export interface CopyableStore {
  /** Rows and highest id of each table a copy moves: where a copy stands, and where a resumed one carries on. */
  copyExtent(): Promise<CopyExtent>;
  /** Up to `limit` rows of `table` after `after` (an id; a hash for rule sets), ascending, with every column. */
  readCopyRows<T extends CopyTable>(table: T, after: CopyKey<T> | null, limit: number): Promise<CopyRows[T][]>;
  /**
   * Writes rows read from another store, ids kept, in one transaction: a new id is inserted; an id already
   * there with the same identity (see CopyRows) takes the row's changing columns (states, counters); any
   * other row under a given id or idempotency key fails the whole batch with `store_copy_conflict`. Ids
   * handed out later (ingest, replay) start above the highest id written. Returns how many rows were new.
   */
  writeCopyRows<T extends CopyTable>(table: T, rows: CopyRows[T][]): Promise<number>;
}

/** A delivery with every column a copy moves: its transformed body and whether a worker held it. */
export interface CopiedDelivery extends Delivery {
  body: Buffer | null;
  /** Set while an attempt ran; a copy writes the row lease-free. */
  leaseToken: string | null;
  /** An ordered row's place within its key (null: unordered). */
  orderSeq: number | null;
  /** When the row first failed as the head of its key. */
  blockedSince: number | null;
  /** The destination a dead letter died on with retryable failures (what a redrive looks for). */
  retryableDeadDestination: string | null;
}

/** A row of the settings (generated ingest secrets, the admin token): name → value, the first writer's. */
export interface CopiedSetting {
  name: string;
  value: string;
  createdAt: number;
}

/** A row of the redrive history, with what ties it to its delivery. */
export interface CopiedRedrive extends DeliveryRedrive {
  id: number;
  deliveryId: number;
}

/**
 * The tables a copy moves, in the order it moves them (a row's references come before it), and their rows.
 * Identity (what must match when an id is already in the target): a setting's name and value (the first
 * writer's value is the instance's: a different one is a conflict); a rule set's hash; an event's source,
 * event name, transfer id, edit number, receipt time and body; a delivery's event, rule, rule set, origin
 * and creation time; an outage's destination and opening; a redrive's delivery, outage, kind and time; an
 * attempt's delivery, number and start; a job's kind and start.
 */
export interface CopyRows {
  settings: CopiedSetting;
  ruleSets: KeptRuleSet;
  events: StoredEvent;
  seenKeys: SeenKeyRecord;
  deliveries: CopiedDelivery;
  outages: Outage;
  redrives: CopiedRedrive;
  attempts: StoredAttempt;
  jobs: Job;
}

export type CopyTable = keyof CopyRows;

export const COPY_TABLES: readonly CopyTable[] = ['settings', 'ruleSets', 'events', 'seenKeys', 'deliveries', 'outages', 'redrives', 'attempts', 'jobs'];

/** Where a page of a copy ends: a setting's name, a rule set's hash, a seen key, any other row's id. */
export type CopyKey<T extends CopyTable> = T extends 'ruleSets' | 'settings' | 'seenKeys' ? string : number;

export interface CopyTableExtent {
  rows: number;
  /** null when the table is empty (settings and rule sets: always null, they are keyed by name and hash). */
  minId: number | null;
  maxId: number | null;
}

export type CopyExtent = Record<CopyTable, CopyTableExtent>;
