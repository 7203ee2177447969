-- +goose Up
-- Event ids are unique per account, not across accounts (docs/outbox.md §1): the same
-- id published in two accounts is two events, and one account never learns that
-- another used an id. SQLite cannot change a primary key in place: the table is
-- built anew with (account, id) as its key and the rows copied.
CREATE TABLE outbox_events_by_account (
    account    TEXT NOT NULL,
    id         TEXT NOT NULL,
    type       TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    stored_at  INTEGER NOT NULL,
    data       BLOB NOT NULL,
    PRIMARY KEY (account, id)
);
INSERT INTO outbox_events_by_account (account, id, type, created_at, stored_at, data)
    SELECT account, id, type, created_at, stored_at, data FROM outbox_events;
DROP TABLE outbox_events;
ALTER TABLE outbox_events_by_account RENAME TO outbox_events;
CREATE INDEX outbox_events_account ON outbox_events (account, created_at, id);
CREATE INDEX outbox_events_stored ON outbox_events (stored_at);

-- A delivery names its event by (account, event id) from now on.
DROP INDEX outbox_deliveries_event;
CREATE INDEX outbox_deliveries_event ON outbox_deliveries (account, event_id);
