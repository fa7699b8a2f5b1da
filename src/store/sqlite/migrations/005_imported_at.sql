-- Events stored by `events import` keep the receipt time of their export (for filters and display), but
-- count their age for retention from the import: an operator who imports last year's events to replay
-- them must not see them pruned at the next retention pass. NULL for webhooks received here.
-- No index: retention walks events_received_at and reads this column only for rows it would delete.
ALTER TABLE events ADD COLUMN imported_at INTEGER;
