-- +goose Up
-- A rotated webhook secret keeps signing until its grace period ends (issue 14), as
-- sqlitenode's 0007_account_rotation.
ALTER TABLE fs_accounts ADD COLUMN previous_webhook_secret text NOT NULL DEFAULT '';
ALTER TABLE fs_accounts ADD COLUMN previous_secret_until timestamptz;
-- Retention purges the oldest ended calls (listings page by fs_calls_account_time).
CREATE INDEX fs_calls_created ON fs_calls(created_at) WHERE NOT active;
