-- Ordered delivery per key. A delivery of a rule with `order` carries its key value and a sequence number
-- within its (rule, key): the next after the pending rows of that key, given when the row is written (and
-- again when a retry makes it pending: it joins the back of its key). A claim takes a row only when no
-- earlier row of its key is pending and none is leased, so one key has one attempt in flight at a time, across
-- restarts and crashes. NULL order_key: unordered (every row before this migration, every other rule).
ALTER TABLE deliveries ADD COLUMN order_key TEXT;
ALTER TABLE deliveries ADD COLUMN order_seq INTEGER;
-- When the row first failed as the head of its key (unordered rows too): how long it has blocked the key.
ALTER TABLE deliveries ADD COLUMN blocked_since INTEGER;

-- The pending rows of each key in order: the claim's head check, the next sequence number, blocked keys.
CREATE INDEX deliveries_order_pending ON deliveries (rule_id, order_key, order_seq) WHERE state = 'pending' AND order_key IS NOT NULL;
