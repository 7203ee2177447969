// Package filter parses and evaluates endpoint filters: JSON conditions on an event's
// data that decide whether an endpoint gets a delivery of it (docs/outbox.md §1,
// filters). Parse validates a filter once, when an endpoint is written, and names the
// place of the first error; Match evaluates a parsed filter on data that Decode read.
package filter
