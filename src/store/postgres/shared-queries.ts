import type pg from 'pg';
import type { ClockOffset } from './clock-offset.js';
import type { ConsoleSession } from '../console-session-store.js';
import { named } from './sql-params.js';

interface SessionRow {
  id_hash: string;
  csrf: string;
  expires_at: number;
}

const INSERT_SETTING = named('insert_setting', 'INSERT INTO settings (name, value, created_at) VALUES ($1, $2, $3) ON CONFLICT (name) DO NOTHING RETURNING value');
const GET_SETTING = named('get_setting', 'SELECT value FROM settings WHERE name = $1');
const DELETE_EXPIRED_SESSIONS = named('delete_expired_sessions', 'DELETE FROM console_sessions WHERE expires_at <= $1');
const INSERT_SESSION = named('insert_session', 'INSERT INTO console_sessions (id_hash, csrf, expires_at) VALUES ($1, $2, $3)');
// Every session lasts as long, so the ones that expire first are the oldest.
const DELETE_SESSIONS_BEYOND = named('delete_sessions_beyond', 'DELETE FROM console_sessions WHERE id_hash IN (SELECT id_hash FROM console_sessions ORDER BY expires_at DESC OFFSET $1)');
const GET_SESSION = named('get_session', 'SELECT * FROM console_sessions WHERE id_hash = $1 AND expires_at > $2');
const DELETE_SESSION = named('delete_session', 'DELETE FROM console_sessions WHERE id_hash = $1');

/** Generated settings and console sessions. Session expiry is kept in the database's clock, as lease ends are. */
export class SharedQueries {
  constructor(
    private readonly db: pg.Pool,
    private readonly clock: ClockOffset,
  ) {}

  async claimSetting(name: string, value: string, now: number): Promise<string> {
    const inserted = await this.db.query<{ value: string }>({ ...INSERT_SETTING, values: [name, value, now] });
    if (inserted.rows[0]) return inserted.rows[0].value;
    // Another node's insert won (its commit came first; the insert above waited for it): a new statement sees it.
    return (await this.getSetting(name))!;
  }

  async getSetting(name: string): Promise<string | null> {
    return (await this.db.query<{ value: string }>({ ...GET_SETTING, values: [name] })).rows[0]?.value ?? null;
  }

  /** In the caller's transaction. */
  async saveSession(client: pg.PoolClient, session: ConsoleSession, keep: number, now: number): Promise<void> {
    await client.query({ ...DELETE_EXPIRED_SESSIONS, values: [this.clock.toDatabase(now)] });
    await client.query({ ...INSERT_SESSION, values: [session.idHash, session.csrf, this.clock.toDatabase(session.expiresAt)] });
    await client.query({ ...DELETE_SESSIONS_BEYOND, values: [keep] });
  }

  async getSession(idHash: string, now: number): Promise<ConsoleSession | null> {
    const row = (await this.db.query<SessionRow>({ ...GET_SESSION, values: [idHash, this.clock.toDatabase(now)] })).rows[0];
    return row ? { idHash: row.id_hash, csrf: row.csrf, expiresAt: this.clock.toNode(row.expires_at) } : null;
  }

  async deleteSession(idHash: string): Promise<void> {
    await this.db.query({ ...DELETE_SESSION, values: [idHash] });
  }
}
