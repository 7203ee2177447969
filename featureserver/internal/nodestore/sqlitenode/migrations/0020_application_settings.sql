-- +goose Up
-- An application's speech settings and env_vars, which its calls' hooks carry as
-- defaults and env_vars (issue 26), as JSON.
ALTER TABLE fs_applications ADD COLUMN settings TEXT NOT NULL DEFAULT '{}';
