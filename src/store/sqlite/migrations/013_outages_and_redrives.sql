-- Redrive after an outage. An outage runs from the first failed attempt of the run that opened a
-- destination's circuit to the success that closed it; it is kept so a restart in between loses nothing.
-- At most one outage per destination is open (closed_at NULL) at a time.
CREATE TABLE outages (
  id            INTEGER PRIMARY KEY,
  destination   TEXT    NOT NULL, -- scheme://host:port, as attempts record it
  opened_at     INTEGER NOT NULL,
  closed_at     INTEGER,
  last_probe_at INTEGER,          -- when a dead letter was last sent again to find out whether it recovered
  redriven      INTEGER NOT NULL DEFAULT 0
);
CREATE UNIQUE INDEX outages_open_destination ON outages (destination) WHERE closed_at IS NULL;

-- Every time a dead letter was sent again: by the redrive when its outage closed, or as a probe.
CREATE TABLE delivery_redrives (
  id           INTEGER PRIMARY KEY,
  delivery_id  INTEGER NOT NULL REFERENCES deliveries (id) ON DELETE CASCADE,
  outage_id    INTEGER NOT NULL REFERENCES outages (id),
  kind         TEXT    NOT NULL CHECK (kind IN ('redrive', 'probe')),
  redriven_at  INTEGER NOT NULL,
  due_at       INTEGER NOT NULL
);
CREATE INDEX delivery_redrives_delivery ON delivery_redrives (delivery_id, id);

-- pass_offset: attempts made before the current pass of the rule's retry schedule (a redrive starts a new
-- pass). retryable_dead_destination: set when retries ran out on retryable failures (network errors,
-- timeouts, 408/425/429/5xx), naming the destination; NULL for every other dead letter and live delivery.
ALTER TABLE deliveries ADD COLUMN pass_offset INTEGER NOT NULL DEFAULT 0;
ALTER TABLE deliveries ADD COLUMN retryable_dead_destination TEXT;
CREATE INDEX deliveries_retryable_dead ON deliveries (retryable_dead_destination, id)
  WHERE state = 'dead' AND retryable_dead_destination IS NOT NULL;
