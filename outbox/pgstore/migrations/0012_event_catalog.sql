-- +goose Up
-- Issue 29: each account's event-type catalog, with JSON Schemas, and whether it is
-- strict (docs/outbox.md §1).
CREATE TABLE outbox_event_types (
    account     text NOT NULL,
    name        text NOT NULL,
    description text NOT NULL,
    schema      text NOT NULL,
    archived_at timestamptz,
    created_at  timestamptz NOT NULL,
    updated_at  timestamptz NOT NULL,
    PRIMARY KEY (account, name)
);

CREATE TABLE outbox_catalogs (
    account text PRIMARY KEY,
    strict  boolean NOT NULL
);
