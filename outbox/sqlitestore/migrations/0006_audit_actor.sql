-- +goose Up
-- The audit log names who made each change (an API token, or the outbox itself), the
-- delivery of a manual retry and how many deliveries a recover queued (issue 15).
-- Entries written before were all the outbox's own or its Go callers'.
ALTER TABLE outbox_audit ADD COLUMN actor TEXT NOT NULL DEFAULT 'system';
ALTER TABLE outbox_audit ADD COLUMN delivery_id TEXT NOT NULL DEFAULT '';
ALTER TABLE outbox_audit ADD COLUMN count INTEGER NOT NULL DEFAULT 0;
-- One endpoint's entries, newest first.
CREATE INDEX outbox_audit_endpoint ON outbox_audit (endpoint_id, id);
