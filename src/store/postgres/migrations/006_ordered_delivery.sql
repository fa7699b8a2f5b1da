-- Ordered delivery per key, as SQLite's migration 012. The sequence number of an ordered row comes from
-- one database sequence: within a key, a row written (or retried) later always has a higher number, across
-- nodes. A claim takes a row only when no earlier row of its key is pending and none is leased.
ALTER TABLE deliveries
  ADD COLUMN order_key     text,
  ADD COLUMN order_seq     bigint,
  ADD COLUMN blocked_since bigint;  -- unix ms (node clock, like started_at): when the row first failed

CREATE SEQUENCE delivery_order_seq;

CREATE INDEX deliveries_order_pending ON deliveries (rule_id, order_key, order_seq) WHERE state = 'pending' AND order_key IS NOT NULL;
