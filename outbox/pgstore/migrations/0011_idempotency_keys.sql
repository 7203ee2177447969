-- +goose Up
-- Issue 29: the Idempotency-Key of a publish, kept 24 h with the fingerprint of the
-- request and the event it published (docs/outbox.md §1).
CREATE TABLE outbox_idempotency_keys (
    account     text NOT NULL,
    key         text NOT NULL,
    fingerprint text NOT NULL,
    event_id    text NOT NULL,
    created_at  timestamptz NOT NULL,
    PRIMARY KEY (account, key)
);
-- The purge walks keys by age.
CREATE INDEX outbox_idempotency_keys_created ON outbox_idempotency_keys (created_at);
