-- What every node of an instance must agree on without configuration: the ingest secrets and the admin
-- token generated when none is configured (name → value; the first writer wins, later starts read it).
CREATE TABLE settings (
  name       TEXT    PRIMARY KEY,
  value      TEXT    NOT NULL,
  created_at INTEGER NOT NULL
);

-- Console log-ins, readable by every node: a session started on one node is valid on all, and a log-out
-- on one ends it on all. id_hash is the sha256 of the cookie's session id: the database never holds a
-- value a browser could present.
CREATE TABLE console_sessions (
  id_hash    TEXT    PRIMARY KEY,
  csrf       TEXT    NOT NULL,
  expires_at INTEGER NOT NULL
);
CREATE INDEX console_sessions_expiry ON console_sessions (expires_at);
