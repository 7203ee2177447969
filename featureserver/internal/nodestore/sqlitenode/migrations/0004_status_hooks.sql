-- +goose Up
-- How the application configured each status hook the outbox delivers to (method and
-- Basic credentials, per account and URL without query): notifications still queued
-- when a node restarts go out as configured, not as a bare POST.
CREATE TABLE fs_status_hooks (
    account_sid TEXT NOT NULL,
    url         TEXT NOT NULL,
    method      TEXT NOT NULL,
    username    TEXT NOT NULL,
    password    TEXT NOT NULL,
    updated_at  INTEGER NOT NULL,
    PRIMARY KEY (account_sid, url)
);
