import type pg from 'pg';
import { rejoinOrder } from '../join-back.js';
import type { DeliveryRedrive, Outage, RedriveKind, RedriveSpacing } from '../outage-store.js';
import { spaceRedrives } from '../redrive-spacing.js';
import { toDeliveryRedrive, toOutage, type OutageRow, type RedriveRow } from '../stored-rows.js';
import type { ClockOffset } from './clock-offset.js';
import { named } from './sql-params.js';
import { HISTORY, moveDeliveries } from './delivery-tables.js';

const OPEN = named('outage_open', `
  INSERT INTO outages (destination, opened_at) VALUES ($1, $2) ON CONFLICT (destination) WHERE closed_at IS NULL DO NOTHING RETURNING id`);
const OPEN_ROW = named('outage_open_row', 'SELECT * FROM outages WHERE destination = $1 AND closed_at IS NULL');
/** The row lock makes a second closer wait, then find it closed: one transaction redrives. */
const CLOSE = named('outage_close', 'UPDATE outages SET closed_at = $1 WHERE destination = $2 AND closed_at IS NULL RETURNING *');
const CLAIM_PROBE = named('outage_claim_probe', `
  UPDATE outages SET last_probe_at = $1 WHERE id = $2 AND closed_at IS NULL AND (last_probe_at IS NULL OR last_probe_at <= $3) RETURNING *`);
const COUNT_REDRIVEN = named('outage_count_redriven', 'UPDATE outages SET redriven = redriven + $1 WHERE id = $2 RETURNING *');
/** Dead letters that died of retryable failures at the destination within the outage, oldest first. */
const CANDIDATES = named('outage_candidates', `
  SELECT id, rule_id FROM ${HISTORY}
  WHERE state = 'dead' AND retryable_dead_destination = $1 AND updated_at >= $2 AND updated_at <= $3 AND rule_id = ANY($4::text[])
  ORDER BY id FOR UPDATE`);
const REDRIVE = named('outage_redrive', `
  WITH input AS (
    SELECT r.id, r.next_attempt_at, r.due_at, nextval('delivery_order_seq') AS seq
    FROM (SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::bigint[]) WITH ORDINALITY AS u(id, next_attempt_at, due_at, n) ORDER BY n) r
  ),
  -- An ordered rule's redriven row joins the back of its key (join-back.ts), in the order the ids are given.
  ${moveDeliveries({
    name: 'moved', from: HISTORY, using: 'input r', where: "d.id = r.id AND d.state = 'dead'", extra: 'r.due_at',
    set: {
      state: "'pending'", next_attempt_at: 'r.next_attempt_at', pass_offset: 'd.attempts', dead_reason: 'NULL::text', retryable_dead_destination: 'NULL::text',
      lease_token: 'NULL::text', updated_at: '$4::bigint', blocked_since: 'NULL::bigint',
      order_seq: 'CASE WHEN d.order_key IS NULL THEN NULL::bigint ELSE r.seq END',
    },
  })}
  INSERT INTO delivery_redrives (delivery_id, outage_id, kind, redriven_at, due_at)
  SELECT id, $5, $6, $4, due_at FROM moved ORDER BY id
  RETURNING delivery_id`);

/** Outages and the redrive of their dead letters. Outage times are the nodes' clocks; due times the database's. */
export class OutageQueries {
  constructor(
    private readonly db: pg.Pool,
    private readonly clock: ClockOffset,
  ) {}

  async open(client: pg.PoolClient, destination: string, openedAt: number): Promise<{ outage: Outage; opened: boolean }> {
    const inserted = await client.query({ ...OPEN, values: [destination, openedAt] });
    const { rows } = await client.query<OutageRow>({ ...OPEN_ROW, values: [destination] });
    return { outage: toOutage(rows[0]!), opened: inserted.rowCount === 1 };
  }

  async list(filter: { open?: boolean; limit: number }): Promise<Outage[]> {
    const where = filter.open ? 'WHERE closed_at IS NULL' : '';
    const { rows } = await this.db.query<OutageRow>(`SELECT * FROM outages ${where} ORDER BY id DESC LIMIT $1`, [filter.limit]);
    return rows.map(toOutage);
  }

  async close(client: pg.PoolClient, destination: string, closedAt: number, spacing: RedriveSpacing): Promise<{ outage: Outage; redriven: number[] } | null> {
    const closed = (await client.query<OutageRow>({ ...CLOSE, values: [closedAt, destination] })).rows[0];
    if (!closed) return null;
    const candidates = (await this.candidates(client, closed, closedAt, [...spacing.keys()])).map((c) => ({ id: c.id, ruleId: c.rule_id }));
    const due = spaceRedrives(candidates, spacing, closedAt);
    const redriven = await this.redrive(client, closed.id, 'redrive', closedAt, due.map((d) => d.id), due.map((d) => d.dueAt));
    const { rows } = await client.query<OutageRow>({ ...COUNT_REDRIVEN, values: [redriven.length, closed.id] });
    return { outage: toOutage(rows[0]!), redriven };
  }

  async probe(client: pg.PoolClient, outageId: number, now: number, minIntervalMs: number, ruleIds: readonly string[]): Promise<number | null> {
    const claimed = (await client.query<OutageRow>({ ...CLAIM_PROBE, values: [now, outageId, now - minIntervalMs] })).rows[0];
    if (!claimed) return null;
    const oldest = (await this.candidates(client, claimed, now, ruleIds))[0];
    if (!oldest) return null;
    const [id] = await this.redrive(client, claimed.id, 'probe', now, [oldest.id], [now]);
    if (id === undefined) return null;
    await client.query({ ...COUNT_REDRIVEN, values: [1, claimed.id] });
    return id;
  }

  async redrivesOfDelivery(deliveryId: number): Promise<DeliveryRedrive[]> {
    const { rows } = await this.db.query<RedriveRow>('SELECT * FROM delivery_redrives WHERE delivery_id = $1 ORDER BY id', [deliveryId]);
    return rows.map(toDeliveryRedrive);
  }

  private async candidates(client: pg.PoolClient, outage: OutageRow, until: number, ruleIds: readonly string[]): Promise<{ id: number; rule_id: string }[]> {
    return (await client.query<{ id: number; rule_id: string }>({ ...CANDIDATES, values: [outage.destination, outage.opened_at, until, ruleIds] })).rows;
  }

  private async redrive(client: pg.PoolClient, outageId: number, kind: RedriveKind, now: number, ids: number[], dueTimes: number[]): Promise<number[]> {
    if (ids.length === 0) return [];
    const rejoining = rejoinOrder(ids.map((id, i) => ({ id, dueAt: dueTimes[i]! })));
    const values = [rejoining.map((r) => r.id), rejoining.map((r) => this.clock.toDatabase(r.dueAt)), rejoining.map((r) => r.dueAt), now, outageId, kind];
    const { rows } = await client.query<{ delivery_id: number }>({ ...REDRIVE, values });
    return rows.map((r) => r.delivery_id);
  }
}
