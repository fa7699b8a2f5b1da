import type { BetterSqlite3 } from '../../sqlite-driver.js';
import type { ConsoleSession } from '../console-session-store.js';

interface SessionRow {
  id_hash: string;
  csrf: string;
  expires_at: number;
}

/** Generated settings and console sessions; synchronous, the store picks the transaction. */
export class SharedQueries {
  private readonly insertSetting;
  private readonly settingByName;
  private readonly insertSession;
  private readonly deleteExpired;
  private readonly deleteBeyond;
  private readonly sessionByHash;
  private readonly deleteOne;

  constructor(db: BetterSqlite3.Database) {
    this.insertSetting = db.prepare('INSERT INTO settings (name, value, created_at) VALUES (?, ?, ?) ON CONFLICT (name) DO NOTHING');
    this.settingByName = db.prepare<[string], { value: string }>('SELECT value FROM settings WHERE name = ?');
    this.insertSession = db.prepare('INSERT INTO console_sessions (id_hash, csrf, expires_at) VALUES (?, ?, ?)');
    this.deleteExpired = db.prepare('DELETE FROM console_sessions WHERE expires_at <= ?');
    // Every session lasts as long, so the ones that expire first are the oldest.
    this.deleteBeyond = db.prepare('DELETE FROM console_sessions WHERE id_hash IN (SELECT id_hash FROM console_sessions ORDER BY expires_at DESC LIMIT -1 OFFSET ?)');
    this.sessionByHash = db.prepare<[string, number], SessionRow>('SELECT * FROM console_sessions WHERE id_hash = ? AND expires_at > ?');
    this.deleteOne = db.prepare('DELETE FROM console_sessions WHERE id_hash = ?');
  }

  /** Must run inside a write transaction: the insert and the read see the same row. */
  claimSetting(name: string, value: string, now: number): string {
    this.insertSetting.run(name, value, now);
    return this.settingByName.get(name)!.value;
  }

  getSetting(name: string): string | null {
    return this.settingByName.get(name)?.value ?? null;
  }

  /** Must run inside a write transaction. */
  saveSession(session: ConsoleSession, keep: number, now: number): void {
    this.deleteExpired.run(now);
    this.insertSession.run(session.idHash, session.csrf, session.expiresAt);
    this.deleteBeyond.run(keep);
  }

  getSession(idHash: string, now: number): ConsoleSession | null {
    const row = this.sessionByHash.get(idHash, now);
    return row ? { idHash: row.id_hash, csrf: row.csrf, expiresAt: row.expires_at } : null;
  }

  deleteSession(idHash: string): void {
    this.deleteOne.run(idHash);
  }
}
