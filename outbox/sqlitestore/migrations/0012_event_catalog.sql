-- +goose Up
-- Issue 29: each account's event-type catalog, with JSON Schemas, and whether it is
-- strict (docs/outbox.md §1).
CREATE TABLE outbox_event_types (
    account     TEXT NOT NULL,
    name        TEXT NOT NULL,
    description TEXT NOT NULL,
    schema      TEXT NOT NULL,
    archived_at INTEGER,
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL,
    PRIMARY KEY (account, name)
) WITHOUT ROWID;

CREATE TABLE outbox_catalogs (
    account TEXT PRIMARY KEY,
    strict  INTEGER NOT NULL
) WITHOUT ROWID;
