-- +goose Up
-- A rotated webhook secret keeps signing until its grace period ends (issue 14).
ALTER TABLE fs_accounts ADD COLUMN previous_webhook_secret TEXT NOT NULL DEFAULT '';
ALTER TABLE fs_accounts ADD COLUMN previous_secret_until INTEGER NOT NULL DEFAULT 0;
-- Listings page by (created_at_ms DESC, sid) and retention purges by created_at_ms.
CREATE INDEX IF NOT EXISTS fs_calls_account_page ON fs_calls(account_sid, created_at_ms DESC, sid);
CREATE INDEX IF NOT EXISTS fs_calls_created ON fs_calls(created_at_ms) WHERE active = 0;
