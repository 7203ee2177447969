-- +goose Up
-- An event keeps the traceparent of the span that published it, so that every
-- delivery attempt, on whichever node and however late, continues its trace; an
-- attempt keeps the headers it sent, credentials masked (issue 29; docs/outbox.md §4, §8).
ALTER TABLE outbox_events ADD COLUMN trace_parent TEXT NOT NULL DEFAULT '';
ALTER TABLE outbox_attempts ADD COLUMN request_headers TEXT NOT NULL DEFAULT '';
