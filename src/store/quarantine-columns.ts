import type { EventIssues, EventQuarantine, QuarantineState } from './quarantine-store.js';

/** The quarantine columns of an `events` row as either driver returns them (SQLite: 0/1, PostgreSQL: boolean). */
export interface QuarantineColumns {
  issues?: string | null;
  quarantine?: QuarantineState | null;
  released_at?: number | null;
  released_by?: string | null;
  release_forced?: number | boolean | null;
}

/** A row selected before migration 015 (or by a query that leaves the columns out) reads as never held. */
export function quarantineOf(row: QuarantineColumns): EventQuarantine {
  return {
    quarantine: row.quarantine ?? null,
    issues: row.issues ? (JSON.parse(row.issues) as EventIssues) : null,
    release:
      row.released_at === null || row.released_at === undefined
        ? null
        : { releasedAt: Number(row.released_at), releasedBy: row.released_by ?? '', forced: Boolean(row.release_forced) },
  };
}

/** How `issues` is kept: JSON text, or null for none. */
export function issuesText(issues: EventIssues | null | undefined): string | null {
  return issues ? JSON.stringify(issues) : null;
}

/** The values of (issues, quarantine, released_at, released_by, release_forced) for an import or a copy. */
export function quarantineValues(e: { issues?: EventIssues | null; quarantine?: QuarantineState | null; release?: EventQuarantine['release'] }, forced: (f: boolean) => unknown): unknown[] {
  const release = e.release ?? null;
  return [issuesText(e.issues), e.quarantine ?? null, release?.releasedAt ?? null, release?.releasedBy ?? null, release ? forced(release.forced) : null];
}
