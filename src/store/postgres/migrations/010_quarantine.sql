-- Quarantine and pinned contracts, as SQLite's migration 015. `issues`: JSON {from, contract?, issues} of
-- what a check found; `quarantine`: held (stored, not routed) or released (routed once, at its release),
-- NULL for an event never held; who released it, when, and whether forced. Expand only: nullable columns
-- without a default rewrite no row, and a node of the previous version goes on inserting events not held.
ALTER TABLE events
  ADD COLUMN issues         text,
  ADD COLUMN quarantine     text CHECK (quarantine IN ('held', 'released')),
  ADD COLUMN released_at    bigint,
  ADD COLUMN released_by    text,
  ADD COLUMN release_forced boolean;

CREATE INDEX events_held_id ON events (id) WHERE quarantine = 'held';
CREATE INDEX events_released_id ON events (id) WHERE quarantine = 'released';
