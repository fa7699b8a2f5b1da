import type { EventEdit, EventSelection, NewEvent, StoredEvent } from './event-store.js';
import type { EventQuarantine, QuarantineState } from './quarantine-store.js';

/**
 * Export and import of whole events (`hookrelay events export` / `import`).
 */
export interface EventArchive {
  /** Whole events (raw bytes and headers), oldest first; page on with `afterId`. */
  listEventsForExport(selection: EventSelection, limit: number): Promise<StoredEvent[]>;
  /** Stores events not already present (same key as ingest), in one transaction; creates no deliveries. */
  importEvents(events: ImportedEvent[], options?: ImportOptions): Promise<ImportResult>;
}

export interface ImportOptions {
  /**
   * When retention starts counting the events' age: now by default, so an import of old events is not
   * pruned at the next pass; null keeps the age of their receipt time (a restore of this store's own events).
   */
  importedAt?: number | null;
}

/** An event as exported: everything stored about it except its id (a new one is given on import). */
export interface ImportedEvent extends Omit<NewEvent, 'deliveries' | 'held'> {
  lastReceivedAt: number;
  receivedCount: number;
  /** A quarantined event keeps its state and release (absent: never held). */
  quarantine?: QuarantineState | null;
  release?: EventQuarantine['release'];
  /** An edited copy keeps its edit (its `editedFrom` names an id of the exporting store). */
  edit?: EventEdit | null;
}

export interface ImportResult {
  imported: number;
  /** Already stored (same key as ingest). */
  duplicates: number;
  /** Not stored: the key is in the ledger of seen keys but its event is gone (retention removed it). */
  seenBefore: number;
}
