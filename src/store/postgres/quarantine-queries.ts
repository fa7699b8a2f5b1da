import type pg from 'pg';
import type { QuarantineRelease, ReleaseOutcome } from '../quarantine-store.js';
import { eventText } from '../storable-text.js';
import type { NewDelivery } from '../outbox-store.js';
import type { OutboxQueries } from './outbox-queries.js';
import { named } from './sql-params.js';

// The row lock the UPDATE takes makes a concurrent release wait and then find the event released.
const RELEASE = named('release_event', `
  UPDATE events SET quarantine = 'released', released_at = $1, released_by = $2, release_forced = $3, rule_set_hash = $4
  WHERE id = $5 AND quarantine = 'held'`);
const COUNT_HELD = named('count_held_events', "SELECT count(*)::int AS held FROM (SELECT 1 FROM events WHERE quarantine = 'held' LIMIT $1) h");
const STATE_OF = named('quarantine_state', 'SELECT quarantine FROM events WHERE id = $1');

/** Quarantine writes, in the caller's transaction. */
export class QuarantineQueries {
  constructor(private readonly outbox: OutboxQueries) {}

  async countHeld(client: pg.Pool | pg.PoolClient, limit: number): Promise<number> {
    const { rows } = await client.query<{ held: number }>({ ...COUNT_HELD, values: [limit] });
    return rows[0]!.held;
  }

  async releaseEvent(client: pg.PoolClient, eventId: number, release: QuarantineRelease, routed: { ruleSetHash: string; deliveries: NewDelivery[] }): Promise<ReleaseOutcome> {
    const changed = await client.query({ ...RELEASE, values: [release.releasedAt, eventText(release.releasedBy), release.forced, routed.ruleSetHash, eventId] });
    if (changed.rowCount === 0) {
      const { rows } = await client.query<{ quarantine: string | null }>({ ...STATE_OF, values: [eventId] });
      return { released: false, reason: rows.length === 0 ? 'missing' : rows[0]!.quarantine === 'released' ? 'released' : 'not-held' };
    }
    const deliveryIds = await this.outbox.insert(client, routed.deliveries.map((delivery) => ({ eventId, delivery })), 'ingest', release.releasedAt);
    return { released: true, deliveryIds };
  }
}
