-- Quarantine and pinned contracts. `issues`: JSON {from, contract?, issues: [{path, message, code}]} of what a
-- check found (the spec schema for a body answered 422, a pinned contract's violations). `quarantine`: held
-- (stored, not routed) or released (routed once, at its release), NULL for an event never held. The release
-- columns say who released it, when, and whether by an operator's decision (forced) rather than a check.
-- Expand only: nullable columns without a default change no stored row, and a node of the previous version
-- goes on inserting events that are simply not held.
ALTER TABLE events ADD COLUMN issues TEXT;
ALTER TABLE events ADD COLUMN quarantine TEXT CHECK (quarantine IN ('held', 'released'));
ALTER TABLE events ADD COLUMN released_at INTEGER;
ALTER TABLE events ADD COLUMN released_by TEXT;
ALTER TABLE events ADD COLUMN release_forced INTEGER;

-- Few events are ever held: a partial index per state serves the quarantine lists and filters.
CREATE INDEX events_held_id ON events (id) WHERE quarantine = 'held';
CREATE INDEX events_released_id ON events (id) WHERE quarantine = 'released';
