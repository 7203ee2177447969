-- +goose Up
-- What a call cut short needs for its final status notification, sent by the node
-- that ends it (its own next run, or another node once its lease expired):
-- nodestore.Call.Recovery, kept beside the record, which the API shows, since it
-- holds the status hook's credentials (issue 13). json, as the record.
ALTER TABLE fs_calls ADD COLUMN recovery json;
