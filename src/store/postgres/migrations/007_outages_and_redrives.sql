-- Redrive after an outage, as SQLite's migration 013. An outage runs from the first failed attempt of the
-- run that opened a destination's circuit to the success that closed it; at most one per destination is open.
CREATE TABLE outages (
  id            bigserial PRIMARY KEY,
  destination   text      NOT NULL, -- scheme://host:port, as attempts record it
  opened_at     bigint    NOT NULL,
  closed_at     bigint,
  last_probe_at bigint,             -- when a dead letter was last sent again to find out whether it recovered
  redriven      integer   NOT NULL DEFAULT 0
);
CREATE UNIQUE INDEX outages_open_destination ON outages (destination) WHERE closed_at IS NULL;

-- Every time a dead letter was sent again: by the redrive when its outage closed, or as a probe.
CREATE TABLE delivery_redrives (
  id           bigserial PRIMARY KEY,
  delivery_id  bigint    NOT NULL REFERENCES deliveries (id) ON DELETE CASCADE,
  outage_id    bigint    NOT NULL REFERENCES outages (id),
  kind         text      NOT NULL CHECK (kind IN ('redrive', 'probe')),
  redriven_at  bigint    NOT NULL,
  due_at       bigint    NOT NULL
);
CREATE INDEX delivery_redrives_delivery ON delivery_redrives (delivery_id, id);

-- pass_offset: attempts made before the current pass of the rule's retry schedule (a redrive starts a new
-- pass). retryable_dead_destination: set when retries ran out on retryable failures, naming the destination.
ALTER TABLE deliveries
  ADD COLUMN pass_offset integer NOT NULL DEFAULT 0,
  ADD COLUMN retryable_dead_destination text;
CREATE INDEX deliveries_retryable_dead ON deliveries (retryable_dead_destination, id)
  WHERE state = 'dead' AND retryable_dead_destination IS NOT NULL;
