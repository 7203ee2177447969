-- +goose Up
-- Where a token came from: a bootstrap file's token replaces the one the previous
-- version of the file installed, so rotating it there revokes the old one.
ALTER TABLE fs_api_tokens ADD COLUMN origin TEXT NOT NULL DEFAULT 'api';
