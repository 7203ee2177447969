-- +goose Up
-- Calls are on record from their start; active marks those still in progress, so a
-- node can end the ones a crashed run left behind.
ALTER TABLE fs_calls ADD COLUMN active INTEGER NOT NULL DEFAULT 0;
CREATE INDEX IF NOT EXISTS fs_calls_active ON fs_calls(active) WHERE active = 1;
