-- One name per concept: an attempt's outcome is the state it left its delivery in (delivered, pending,
-- dead), so "another attempt is scheduled" is `pending`, not `retry`. SQLite cannot change a CHECK
-- constraint in place: the table is rebuilt with the same columns, rows, ids and index.
CREATE TABLE delivery_attempts_new (
  id               INTEGER PRIMARY KEY,
  delivery_id      INTEGER NOT NULL REFERENCES deliveries (id) ON DELETE CASCADE,
  attempt          INTEGER NOT NULL,
  started_at       INTEGER NOT NULL,
  duration_ms      INTEGER NOT NULL,
  url_origin       TEXT    NOT NULL, -- scheme://host:port only: full URLs may carry secrets
  status           INTEGER,
  error_code       TEXT,
  error_message    TEXT,
  response_excerpt TEXT,
  outcome          TEXT    NOT NULL CHECK (outcome IN ('delivered', 'pending', 'dead'))
);

INSERT INTO delivery_attempts_new (id, delivery_id, attempt, started_at, duration_ms, url_origin, status, error_code, error_message, response_excerpt, outcome)
SELECT id, delivery_id, attempt, started_at, duration_ms, url_origin, status, error_code, error_message, response_excerpt,
       CASE outcome WHEN 'retry' THEN 'pending' ELSE outcome END
FROM delivery_attempts;

DROP TABLE delivery_attempts;
ALTER TABLE delivery_attempts_new RENAME TO delivery_attempts;
CREATE INDEX delivery_attempts_delivery ON delivery_attempts (delivery_id, id);
