import type { BetterSqlite3 } from '../../sqlite-driver.js';
import { issuesText } from '../quarantine-columns.js';
import type { QuarantineRelease, ReleaseOutcome } from '../quarantine-store.js';
import type { NewEvent } from '../event-store.js';
import type { NewDelivery } from '../outbox-store.js';
import type { OutboxQueries } from './outbox.js';

/** Quarantine writes, synchronous; the store picks the transaction. */
export class QuarantineQueries {
  private readonly mark;
  private readonly release;
  private readonly stateOf;
  private readonly held;

  constructor(db: BetterSqlite3.Database, private readonly outbox: OutboxQueries) {
    // Only for the rare event with issues: the ingest insert itself stays as it is for every other one.
    this.mark = db.prepare<[string | null, string | null, number]>('UPDATE events SET issues = ?, quarantine = ? WHERE id = ?');
    this.release = db.prepare<[number, string, number, string, number]>(`
      UPDATE events SET quarantine = 'released', released_at = ?, released_by = ?, release_forced = ?, rule_set_hash = ?
      WHERE id = ? AND quarantine = 'held'`);
    this.stateOf = db.prepare<[number], { quarantine: string | null }>('SELECT quarantine FROM events WHERE id = ?');
    this.held = db.prepare<[number], { held: number }>("SELECT count(*) AS held FROM (SELECT 1 FROM events WHERE quarantine = 'held' LIMIT ?)");
  }

  /** Inside the ingest transaction, right after the event's insert. */
  markNew(id: number, event: NewEvent): void {
    if (event.issues || event.held) this.mark.run(issuesText(event.issues), event.held ? 'held' : null, id);
  }

  countHeld(limit: number): number {
    return this.held.get(limit)!.held;
  }

  releaseEvent(eventId: number, release: QuarantineRelease, routed: { ruleSetHash: string; deliveries: NewDelivery[] }): ReleaseOutcome {
    const changed = this.release.run(release.releasedAt, release.releasedBy, release.forced ? 1 : 0, routed.ruleSetHash, eventId).changes;
    if (changed === 0) {
      const row = this.stateOf.get(eventId);
      return { released: false, reason: !row ? 'missing' : row.quarantine === 'released' ? 'released' : 'not-held' };
    }
    return { released: true, deliveryIds: this.outbox.insertDeliveries(eventId, routed.deliveries, 'ingest', release.releasedAt) };
  }
}
