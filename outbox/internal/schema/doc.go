// Package schema compiles the JSON Schemas of an account's event types and checks
// event data against them (docs/outbox.md §1, the event-type catalog), with
// github.com/santhosh-tekuri/jsonschema/v6: drafts 4 to 2020-12 (2020-12 when the
// schema names none), formats asserted, and no reference loaded from outside the
// schema itself (no file, no network).
package schema
