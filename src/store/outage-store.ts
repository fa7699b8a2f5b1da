/**
 * Destination outages and the redrive of their dead letters when they close (src/delivery/outage-tracker.ts).
 */
export interface OutageStore {
  /** Records that `destination` is failing since `openedAt`, unless it already has an open outage; `opened` says whether this call did. */
  openOutage(destination: string, openedAt: number): Promise<{ outage: Outage; opened: boolean }>;
  /** Newest first; `open` keeps only the outages not yet closed. */
  listOutages(filter: { open?: boolean; limit: number }): Promise<Outage[]>;
  /**
   * Closes the destination's open outage (at the store's now) and, in the same transaction, makes the dead letters that died of
   * retryable failures at it since the outage opened pending again (oldest first, spaced per rule, with a
   * new pass of the retry schedule). Null when it has no open outage (another node closed it): exactly one
   * caller redrives.
   */
  closeOutage(destination: string, spacing: RedriveSpacing): Promise<{ outage: Outage; redriven: number[] } | null>;
  /**
   * Sends the oldest such dead letter of an open outage again, due now, unless a probe was sent less than
   * `minIntervalMs` ago (by any node); returns its id, or null.
   */
  probeOutage(outageId: number, options: { minIntervalMs: number; ruleIds: readonly string[] }): Promise<number | null>;
}

/** A destination's outage: from the first failed attempt of the run that opened its circuit to the success that closed it. */
export interface Outage {
  id: number;
  /** scheme://host:port, as attempts record it. */
  destination: string;
  openedAt: number;
  /** Null while the destination is still failing. */
  closedAt: number | null;
  /** When a dead letter was last sent again as a probe. */
  lastProbeAt: number | null;
  /** Dead letters sent again because of it (probes included). */
  redriven: number;
}

/** `redrive`: sent again when its outage closed; `probe`: sent again to find out whether the destination recovered. */
export type RedriveKind = 'redrive' | 'probe';

export interface DeliveryRedrive {
  outageId: number;
  kind: RedriveKind;
  redrivenAt: number;
  /** When its new pass of the retry schedule started (redrives are spread out at the rule's rate). */
  dueAt: number;
}

/**
 * Which dead letters of an outage a redrive sends again: those of the rules named (the rules that opted in),
 * each rule's spaced this many ms apart. Others stay dead.
 */
export type RedriveSpacing = ReadonlyMap<string, number>;
