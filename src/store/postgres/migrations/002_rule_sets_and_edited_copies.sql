-- Rule versions and edited copies, as SQLite's migration 008.

-- Every rule set that was ever loaded, by its hash: a delivery is sent with the rule version it was planned
-- with, and a replay can route an event the way it was routed when it arrived. `rules` is a JSON array of
-- the rules as written in their files (`${ENV}` references unresolved, literal secrets left out). `kind`:
-- `loaded` for the rule files, `one-off` for a single destination an operator sent an edited event to.
CREATE TABLE rule_sets (
  hash            text    PRIMARY KEY,
  kind            text    NOT NULL CHECK (kind IN ('loaded', 'one-off')),
  rules           text    NOT NULL,
  first_loaded_at bigint  NOT NULL
);

-- Events gain the hash of the rule set that routed them, and edited copies: an operator's edit of a stored
-- event, stored as a new event linked to its original. A copy carries its original's transfer id, so the
-- idempotency key gains edit_number: 0 for every received event (a real repeat of the original is still a
-- duplicate), 1, 2, ... for the copies of one transfer. The key keeps transfer_id first, so it still serves
-- lookups by transfer id.
ALTER TABLE events
  ADD COLUMN rule_set_hash text,             -- the rule set that routed it; NULL before rule sets were kept
  ADD COLUMN edit_number   integer NOT NULL DEFAULT 0,
  ADD COLUMN edited_from   bigint,           -- an edited copy: its original's id (no foreign key: retention may prune it)
  ADD COLUMN edited_at     bigint,           -- an edited copy: when it was made; NULL for every received event
  ADD COLUMN edited_via    text CHECK (edited_via IN ('console', 'cli', 'api'));

-- invalid: an edited copy the operator stored on purpose although it fails the event schema
ALTER TABLE events DROP CONSTRAINT events_validation_check;
ALTER TABLE events ADD CONSTRAINT events_validation_check CHECK (validation IN ('valid', 'unrecognised', 'invalid'));

ALTER TABLE events DROP CONSTRAINT events_transfer_key;
ALTER TABLE events ADD CONSTRAINT events_transfer_key UNIQUE (transfer_id, source, event, edit_number);

CREATE INDEX events_invalid_id ON events (id) WHERE validation = 'invalid';
-- The edited copies of one event, newest first (its page lists them).
CREATE INDEX events_edited_from ON events (edited_from, id) WHERE edited_from IS NOT NULL;

-- What a bulk replay did beyond its counters (JSON, null for other jobs): its routing mode, whether it was a
-- dry run, deliveries per rule, rules withheld, events whose original routing is unknown, and a sample.
ALTER TABLE admin_jobs ADD COLUMN summary text;
