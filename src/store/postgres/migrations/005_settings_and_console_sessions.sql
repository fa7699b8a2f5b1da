-- Generated secrets and console sessions shared by every node, as SQLite's migration 011.

-- What every node must agree on without configuration: the ingest secrets and the admin token generated
-- when none is configured (name → value; the first node to insert wins, every node reads it).
CREATE TABLE settings (
  name       text    PRIMARY KEY,
  value      text    NOT NULL,
  created_at bigint  NOT NULL
);

-- Console log-ins: a session started on one node is valid on every node, and a log-out on one ends it on
-- all. id_hash is the sha256 of the cookie's session id: the database never holds a value a browser could
-- present. expires_at is in the database's clock.
CREATE TABLE console_sessions (
  id_hash    text    PRIMARY KEY,
  csrf       text    NOT NULL,
  expires_at bigint  NOT NULL
);
CREATE INDEX console_sessions_expiry ON console_sessions (expires_at);
