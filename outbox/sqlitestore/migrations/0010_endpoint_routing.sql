-- +goose Up
-- Issue 29: an endpoint's own headers, channels, payload filter and rate limit, and
-- the channels and filter exclusions of an event (docs/outbox.md §1). Lists and maps
-- are JSON text, empty for none; the filter is the JSON the account gave.
ALTER TABLE outbox_endpoints ADD COLUMN headers TEXT NOT NULL DEFAULT '';
ALTER TABLE outbox_endpoints ADD COLUMN channels TEXT NOT NULL DEFAULT '';
ALTER TABLE outbox_endpoints ADD COLUMN filter TEXT NOT NULL DEFAULT '';
-- rate_limit is deliveries per second (0: none); rate_tat is the time its bucket
-- would be empty again (Unix microseconds), which only claims change.
ALTER TABLE outbox_endpoints ADD COLUMN rate_limit INTEGER NOT NULL DEFAULT 0;
ALTER TABLE outbox_endpoints ADD COLUMN rate_tat INTEGER;
ALTER TABLE outbox_events ADD COLUMN channels TEXT NOT NULL DEFAULT '';
ALTER TABLE outbox_events ADD COLUMN excluded TEXT NOT NULL DEFAULT '';

-- The claim's join reads the rate limit too: the covering index keeps it.
DROP INDEX outbox_endpoints_claim;
CREATE INDEX outbox_endpoints_claim ON outbox_endpoints (id, status, removed_at, hold_until, in_flight_cap, rate_limit, rate_tat);
