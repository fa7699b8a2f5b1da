import type { BetterSqlite3 } from '../../sqlite-driver.js';
import type { DeliveryRedrive, Outage, RedriveKind, RedriveSpacing } from '../outage-store.js';
import { spaceRedrives } from '../redrive-spacing.js';
import { toDeliveryRedrive, toOutage, type OutageRow, type RedriveRow } from '../stored-rows.js';

/** Outages and the redrive of their dead letters; each method is one transaction of the caller's. */
export class OutageQueries {
  private readonly openRow;
  private readonly insertOpen;
  private readonly closeOpen;
  private readonly redriveOne;
  private readonly insertRedrive;
  private readonly countRedriven;
  private readonly claimProbe;
  private readonly redrivesOf;

  constructor(private readonly db: BetterSqlite3.Database) {
    this.openRow = db.prepare<[string], OutageRow>('SELECT * FROM outages WHERE destination = ? AND closed_at IS NULL');
    this.insertOpen = db.prepare('INSERT INTO outages (destination, opened_at) VALUES (?, ?) ON CONFLICT DO NOTHING');
    this.closeOpen = db.prepare<[number, string], OutageRow>('UPDATE outages SET closed_at = ? WHERE destination = ? AND closed_at IS NULL RETURNING *');
    this.redriveOne = db.prepare(`
      UPDATE deliveries SET state = 'pending', next_attempt_at = ?, pass_offset = attempts, dead_reason = NULL,
        retryable_dead_destination = NULL, lease_token = NULL, updated_at = ?, blocked_since = NULL
      WHERE id = ? AND state = 'dead'`);
    this.insertRedrive = db.prepare('INSERT INTO delivery_redrives (delivery_id, outage_id, kind, redriven_at, due_at) VALUES (?, ?, ?, ?, ?)');
    this.countRedriven = db.prepare<[number, number], OutageRow>('UPDATE outages SET redriven = redriven + ? WHERE id = ? RETURNING *');
    this.claimProbe = db.prepare<[number, number, number], OutageRow>(`
      UPDATE outages SET last_probe_at = ? WHERE id = ? AND closed_at IS NULL AND (last_probe_at IS NULL OR last_probe_at <= ?) RETURNING *`);
    this.redrivesOf = db.prepare<[number], RedriveRow>('SELECT * FROM delivery_redrives WHERE delivery_id = ? ORDER BY id');
  }

  open(destination: string, openedAt: number): { outage: Outage; opened: boolean } {
    const opened = this.insertOpen.run(destination, openedAt).changes === 1;
    return { outage: toOutage(this.openRow.get(destination)!), opened };
  }

  list(filter: { open?: boolean; limit: number }): Outage[] {
    const where = filter.open ? 'WHERE closed_at IS NULL' : '';
    return this.db.prepare<[number], OutageRow>(`SELECT * FROM outages ${where} ORDER BY id DESC LIMIT ?`).all(filter.limit).map(toOutage);
  }

  close(destination: string, closedAt: number, spacing: RedriveSpacing): { outage: Outage; redriven: number[] } | null {
    const row = this.closeOpen.get(closedAt, destination);
    if (!row) return null;
    const candidates = this.candidates(destination, row.opened_at, closedAt).map((c) => ({ id: c.id, ruleId: c.rule_id }));
    const redriven: number[] = [];
    for (const { id, dueAt } of spaceRedrives(candidates, spacing, closedAt)) {
      if (this.redrive(id, row.id, 'redrive', closedAt, dueAt)) redriven.push(id);
    }
    return { outage: toOutage(this.countRedriven.get(redriven.length, row.id)!), redriven };
  }

  probe(outageId: number, now: number, minIntervalMs: number, ruleIds: readonly string[]): number | null {
    const row = this.claimProbe.get(now, outageId, now - minIntervalMs);
    if (!row) return null;
    const allowed = new Set(ruleIds);
    const oldest = this.candidates(row.destination, row.opened_at, now).find((c) => allowed.has(c.rule_id));
    if (!oldest || !this.redrive(oldest.id, row.id, 'probe', now, now)) return null;
    this.countRedriven.get(1, row.id);
    return oldest.id;
  }

  redrivesOfDelivery(deliveryId: number): DeliveryRedrive[] {
    return this.redrivesOf.all(deliveryId).map(toDeliveryRedrive);
  }

  /** Dead letters that died of retryable failures at the destination within the outage, oldest first. */
  private candidates(destination: string, from: number, to: number): { id: number; rule_id: string }[] {
    return this.db
      .prepare<[string, number, number], { id: number; rule_id: string }>(`
        SELECT id, rule_id FROM deliveries INDEXED BY deliveries_retryable_dead
        WHERE state = 'dead' AND retryable_dead_destination = ? AND updated_at >= ? AND updated_at <= ? ORDER BY id`)
      .all(destination, from, to);
  }

  private redrive(id: number, outageId: number, kind: RedriveKind, now: number, dueAt: number): boolean {
    if (this.redriveOne.run(dueAt, now, id).changes !== 1) return false;
    this.insertRedrive.run(id, outageId, kind, now, dueAt);
    return true;
  }
}
