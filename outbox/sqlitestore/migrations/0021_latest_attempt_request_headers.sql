-- +goose Up
-- A delivery's latest attempt lives in its row (migration 0007), and an attempt keeps
-- the request headers it sent (0020, issue 29; docs/outbox.md §4): the row keeps its
-- latest attempt's too, and moves them with it to outbox_attempts when a newer one
-- takes its place. NOT NULL DEFAULT '' (no headers) costs existing rows nothing:
-- SQLite reads the default for a row written before the column, so that a latest
-- attempt recorded before this migration reads, and moves, as one without headers.
ALTER TABLE outbox_deliveries ADD COLUMN attempt_request_headers TEXT NOT NULL DEFAULT '';
