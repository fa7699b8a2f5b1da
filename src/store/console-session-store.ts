/**
 * Console log-ins, shared by every node so any of them answers a logged-in browser.
 */
export interface ConsoleSessionStore {
  /**
   * Starts a console session; in the same transaction deletes the expired ones and, beyond the `keep`
   * newest, the oldest (a flood of log-ins cannot grow the table without bound).
   */
  saveConsoleSession(session: ConsoleSession, keep: number): Promise<void>;
  /** The session with this id hash, unless it has expired by the store's now. */
  getConsoleSession(idHash: string): Promise<ConsoleSession | null>;
  /** Ends a session (log-out, or a new log-in from the same browser); a missing one is no error. */
  deleteConsoleSession(idHash: string): Promise<void>;
}

/** A console log-in as stored: the sha256 of the cookie's session id, never the id itself. */
export interface ConsoleSession {
  idHash: string;
  /** The session's CSRF token, which mutations made with the session must echo. */
  csrf: string;
  expiresAt: number;
}
