-- Nearly every delivery ends delivered, and nothing looks delivered rows up by state. Indexing them by state
-- cost every delivery three B-tree entries at ingest and three moves when it was delivered: a third of the
-- SQLite time of recording an attempt (about 14.5 µs a row, 10 µs without). State indexes now hold only
-- what is still unsettled:
--   pending rows: deliveries_due (claims; per-rule pending counts: it now carries rule_id) and
--                 deliveries_unsettled_event (events with a pending delivery; retention's check);
--   dead rows:    the same event index, plus newest-first lists and per-rule counts of dead letters.
-- Delivered counts per rule are the rule's total (deliveries_rule_id) less the two. Queries repeat the
-- partial index's condition word for word: that is how SQLite knows it may use it.
DROP INDEX deliveries_state_id;
DROP INDEX deliveries_state_event;
DROP INDEX deliveries_rule_state;
DROP INDEX deliveries_due;

-- id before rule_id: rows due at the same millisecond are claimed in the order they were created (an event's
-- deliveries together, rules interleaved), not rule by rule, which would fill a claim with one destination's
-- rows and scatter its payload reads over many events.
CREATE INDEX deliveries_due ON deliveries (next_attempt_at, id, rule_id) WHERE state = 'pending';
CREATE INDEX deliveries_unsettled_event ON deliveries (state, event_id) WHERE state <> 'delivered';
CREATE INDEX deliveries_dead_id ON deliveries (id) WHERE state = 'dead';
CREATE INDEX deliveries_dead_rule ON deliveries (rule_id, id) WHERE state = 'dead';
